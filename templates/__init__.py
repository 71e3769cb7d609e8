"""The report and nginx templates, shipped inside the wheel as wrkreport.templates."""
