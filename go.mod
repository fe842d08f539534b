module github.com/toolguard/toolguard

go 1.24
