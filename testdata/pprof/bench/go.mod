module flameox.test/pprofbench

go 1.24
