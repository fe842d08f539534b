module github.com/toolguard/toolguard/adapters/echov5

go 1.25.5

replace github.com/toolguard/toolguard => ../..

require (
	github.com/labstack/echo/v5 v5.4.4
	github.com/toolguard/toolguard v0.1.0
)

require (
	github.com/google/jsonschema-go v0.4.2 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/mark3labs/mcp-go v1.2.1
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.2 // indirect
	github.com/spf13/cast v1.7.1 // indirect
	github.com/yosida95/uritemplate/v3 v3.0.2 // indirect
	golang.org/x/text v0.40.0 // indirect
)
