module github.com/flameox/flameox

go 1.26.8
