module github.com/toolguard/toolguard/adapters/echov5

go 1.25.5

replace github.com/toolguard/toolguard => ../..

require (
	github.com/labstack/echo/v5 v5.4.4
	github.com/toolguard/toolguard v0.1.0
)
