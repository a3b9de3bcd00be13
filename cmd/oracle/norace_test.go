//go:build !race

package main

var raceBuild = false
