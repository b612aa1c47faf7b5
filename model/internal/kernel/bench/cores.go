//go:build ignore

// Prints the thread count kernel.NewPool(0) uses, for openblas_ratio.sh.
package main

import (
	"fmt"

	"github.com/livehat/livehat/model/internal/kernel"
)

func main() { fmt.Println(kernel.PhysicalCores()) }
