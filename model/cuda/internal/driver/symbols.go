package driver

import "github.com/livehat/livehat/model/cuda/internal/dl"

// fn indexes the driver entry points the binding calls.
type fn int

// The driver entry points, in the order of symbols().
const (
	fnInit fn = iota
	fnDriverGetVersion
	fnGetErrorName
	fnGetErrorString
	fnDeviceGetCount
	fnDeviceGet
	fnDeviceGetName
	fnDeviceGetAttribute
	fnDeviceTotalMem
	fnDevicePrimaryCtxRetain
	fnDevicePrimaryCtxRelease
	fnCtxSetCurrent
	fnCtxSynchronize
	fnMemGetInfo
	fnMemAlloc
	fnMemFree
	fnMemcpyHtoD
	fnMemcpyDtoH
	fnMemcpyDtoD
	fnMemcpyHtoDAsync
	fnMemcpyDtoHAsync
	fnMemcpyDtoDAsync
	fnMemsetD32
	fnMemsetD32Async
	fnStreamCreate
	fnStreamDestroy
	fnStreamSynchronize
	fnEventCreate
	fnEventDestroy
	fnEventRecord
	fnEventSynchronize
	fnEventElapsedTime
	fnModuleLoadData
	fnModuleUnload
	fnModuleGetFunction
	fnFuncSetAttribute
	fnLaunchKernel
	fnStreamBeginCapture
	fnStreamEndCapture
	fnGraphInstantiate
	fnGraphLaunch
	fnGraphExecDestroy
	fnGraphDestroy
	numFns
)

// symbols is the binding's symbol table: for each fn the exported names of
// libcuda.so.1 that provide it. The binding targets the CUDA 12.0 and newer
// driver API (drivers 525+, including CUDA 13): with dlopen there is no
// cuda.h to turn cuMemAlloc into cuMemAlloc_v2, so the versioned names are
// spelled out, as cuda.h maps them. cuEventElapsedTime_v2 exists from 12.8
// (CUDA 13's header maps cuEventElapsedTime to it), so the first version is
// the fallback for older drivers. cuGraphInstantiateWithFlags is what CUDA
// 12's cuGraphInstantiate macro expands to. The primary context calls are
// used instead of cuCtxCreate, whose signature changed in CUDA 13
// (cuCtxCreate_v4).
func symbols() []dl.Symbol {
	one := func(names ...string) dl.Symbol { return dl.Symbol{Names: names} }
	return []dl.Symbol{
		fnInit:                    one("cuInit"),
		fnDriverGetVersion:        one("cuDriverGetVersion"),
		fnGetErrorName:            one("cuGetErrorName"),
		fnGetErrorString:          one("cuGetErrorString"),
		fnDeviceGetCount:          one("cuDeviceGetCount"),
		fnDeviceGet:               one("cuDeviceGet"),
		fnDeviceGetName:           one("cuDeviceGetName"),
		fnDeviceGetAttribute:      one("cuDeviceGetAttribute"),
		fnDeviceTotalMem:          one("cuDeviceTotalMem_v2"),
		fnDevicePrimaryCtxRetain:  one("cuDevicePrimaryCtxRetain"),
		fnDevicePrimaryCtxRelease: one("cuDevicePrimaryCtxRelease_v2"),
		fnCtxSetCurrent:           one("cuCtxSetCurrent"),
		fnCtxSynchronize:          one("cuCtxSynchronize"),
		fnMemGetInfo:              one("cuMemGetInfo_v2"),
		fnMemAlloc:                one("cuMemAlloc_v2"),
		fnMemFree:                 one("cuMemFree_v2"),
		fnMemcpyHtoD:              one("cuMemcpyHtoD_v2"),
		fnMemcpyDtoH:              one("cuMemcpyDtoH_v2"),
		fnMemcpyDtoD:              one("cuMemcpyDtoD_v2"),
		fnMemcpyHtoDAsync:         one("cuMemcpyHtoDAsync_v2"),
		fnMemcpyDtoHAsync:         one("cuMemcpyDtoHAsync_v2"),
		fnMemcpyDtoDAsync:         one("cuMemcpyDtoDAsync_v2"),
		fnMemsetD32:               one("cuMemsetD32_v2"),
		fnMemsetD32Async:          one("cuMemsetD32Async"),
		fnStreamCreate:            one("cuStreamCreate"),
		fnStreamDestroy:           one("cuStreamDestroy_v2"),
		fnStreamSynchronize:       one("cuStreamSynchronize"),
		fnEventCreate:             one("cuEventCreate"),
		fnEventDestroy:            one("cuEventDestroy_v2"),
		fnEventRecord:             one("cuEventRecord"),
		fnEventSynchronize:        one("cuEventSynchronize"),
		fnEventElapsedTime:        one("cuEventElapsedTime_v2", "cuEventElapsedTime"),
		fnModuleLoadData:          one("cuModuleLoadData"),
		fnModuleUnload:            one("cuModuleUnload"),
		fnModuleGetFunction:       one("cuModuleGetFunction"),
		fnFuncSetAttribute:        one("cuFuncSetAttribute"),
		fnLaunchKernel:            one("cuLaunchKernel"),
		fnStreamBeginCapture:      one("cuStreamBeginCapture_v2"),
		fnStreamEndCapture:        one("cuStreamEndCapture"),
		fnGraphInstantiate:        one("cuGraphInstantiateWithFlags"),
		fnGraphLaunch:             one("cuGraphLaunch"),
		fnGraphExecDestroy:        one("cuGraphExecDestroy"),
		fnGraphDestroy:            one("cuGraphDestroy"),
	}
}

// SymbolNames lists the preferred exported name of every bound entry point,
// for diagnostics and the README.
func SymbolNames() []string {
	var names []string
	for _, s := range symbols() {
		names = append(names, s.Names[0])
	}
	return names
}
