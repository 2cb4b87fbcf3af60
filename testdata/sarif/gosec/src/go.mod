module example.com/gosecfixture

go 1.22
