package driver

import (
	"runtime"
	"testing"
)

func lockThread(t *testing.T) {
	runtime.LockOSThread()
	t.Cleanup(runtime.UnlockOSThread)
}
