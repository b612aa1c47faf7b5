package engine

import (
	"context"
	"fmt"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// WASI errno values (wasi_snapshot_preview1 witx).
const (
	errnoBadf   = 8
	errnoNotdir = 54
)

// pathFunc is a WASI function that names a file by a directory
// descriptor and a path; dirParam is the index of the descriptor.
type pathFunc struct {
	name     string
	params   []api.ValueType
	dirParam int
}

// pathFuncs are every WASI preview 1 function that resolves a path.
var pathFuncs = []pathFunc{
	{"path_create_directory", []api.ValueType{i32, i32, i32}, 0},
	{"path_filestat_get", []api.ValueType{i32, i32, i32, i32, i32}, 0},
	{"path_filestat_set_times", []api.ValueType{i32, i32, i32, i32, i64, i64, i32}, 0},
	{"path_link", []api.ValueType{i32, i32, i32, i32, i32, i32, i32}, 0},
	{"path_open", []api.ValueType{i32, i32, i32, i32, i32, i64, i64, i32, i32}, 0},
	{"path_readlink", []api.ValueType{i32, i32, i32, i32, i32, i32}, 0},
	{"path_remove_directory", []api.ValueType{i32, i32, i32}, 0},
	{"path_rename", []api.ValueType{i32, i32, i32, i32, i32, i32}, 0},
	{"path_symlink", []api.ValueType{i32, i32, i32, i32, i32}, 2},
	{"path_unlink_file", []api.ValueType{i32, i32, i32}, 0},
}

// instantiateWASI provides WASI preview 1 with no directory open: every
// path function fails on its descriptor before the path is looked at,
// with EBADF, or ENOTDIR for the standard streams (0-2), which is what
// Extism's runtime answers when no path is allowed (wasmtime's
// wasi-common looks the descriptor up first). wazero's own functions
// check the path first and answer EPERM for an absolute one, so a guest
// would see EPERM or EBADF depending on how it spelled the name.
func instantiateWASI(ctx context.Context, rt wazero.Runtime) error {
	b := rt.NewHostModuleBuilder(wasi_snapshot_preview1.ModuleName)
	wasi_snapshot_preview1.NewFunctionExporter().ExportFunctions(b)
	for _, f := range pathFuncs {
		dir := f.dirParam
		b.NewFunctionBuilder().
			WithGoModuleFunction(api.GoModuleFunc(func(_ context.Context, _ api.Module, s []uint64) {
				if fd := uint32(s[dir]); fd <= 2 {
					s[0] = errnoNotdir
				} else {
					s[0] = errnoBadf
				}
			}), f.params, []api.ValueType{i32}).
			WithName(f.name).
			Export(f.name)
	}
	if _, err := b.Instantiate(ctx); err != nil {
		return fmt.Errorf("wasi: %w", err)
	}
	return nil
}
