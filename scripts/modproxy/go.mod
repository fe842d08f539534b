module github.com/toolguard/toolguard/scripts/modproxy

go 1.24
