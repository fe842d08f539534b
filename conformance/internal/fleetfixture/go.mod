module github.com/toolguard/toolguard/conformance/internal/fleetfixture

go 1.24

require github.com/toolguard/toolguard v0.1.0

replace github.com/toolguard/toolguard => ../../..
