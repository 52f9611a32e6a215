//go:build !linux

package main

import "errors"

func readAt(string) (string, error) { return "", errors.New("readat: Linux only") }
