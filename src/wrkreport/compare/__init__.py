"""Compare: two analysed runs cell by cell, or one run's --variant (A: its nginx setups, B: their twins), with intervals."""
