module example.com/leaksuite

go 1.24
