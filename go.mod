module github.com/layout-oracle/oracle

go 1.26.8

require (
	github.com/deckarep/golang-set/v2 v2.8.0 // indirect
	github.com/go-stack/stack v1.8.1 // indirect
	github.com/google/go-cmp v0.7.0 // indirect
	github.com/mattn/go-colorable v0.1.14 // indirect
	github.com/mattn/go-isatty v0.0.20 // indirect
	github.com/mxschmitt/playwright-go v0.6401.0 // indirect
	github.com/rs/zerolog v1.35.1 // indirect
	github.com/stretchr/testify v1.12.1 // indirect
	golang.org/x/sys v0.29.0 // indirect
)
