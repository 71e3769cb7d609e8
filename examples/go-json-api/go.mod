module gojsonapi

// Standard library only, so Debian 12's golang-go (1.19) builds it too.
go 1.19
