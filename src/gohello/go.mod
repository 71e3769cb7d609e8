module gohello

// 1.19 so Debian 12's golang-go (1.19) builds it too; standard library only.
go 1.19
