// The SIMT emulator's server: it reads commands on stdin (allocate, free,
// upload, download, copy, launch) and answers on stdout, so a Go executor
// can run the real kernel sources on CPU threads. Device addresses are
// this process's own pointers, so pointer tables written by the Go side
// work as on a GPU. Protocol: a command byte, little-endian fields; every
// answer starts with a status byte (0 ok, 1 error followed by a
// length-prefixed message).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>
#include <setjmp.h>
#include <ucontext.h>

#include "simt.h"
#include "slot.h"

uint3 threadIdx, blockIdx;
dim3 blockDim, gridDim;
uint64_t* simt_slots;

using Kernel = std::function<void(const std::vector<Slot>&)>;
std::unordered_map<std::string, Kernel> kernels();

// Fiber is one CUDA thread of the running block.
enum State { Running, AtBlock, AtWarp, Done };
// A fiber starts on its own stack through makecontext/setcontext; after
// that, switches use _setjmp/_longjmp, which unlike swapcontext make no
// system call (the signal mask is never touched), so a barrier costs
// nanoseconds.
struct Fiber {
    ucontext_t ctx;
    jmp_buf jb;
    State state;
    bool started;
    uint3 idx;
};

static jmp_buf scheduler;
static std::vector<Fiber> fibers;
static std::vector<char> stacks;
static const size_t stackSize = 64 << 10;
static unsigned current;
static const Kernel* running;
static const std::vector<Slot>* runningArgs;

static void wait(State s) {
    fibers[current].state = s;
    if (!_setjmp(fibers[current].jb)) _longjmp(scheduler, 1);
}
void simt_block_barrier() { wait(AtBlock); }
void simt_warp_barrier() { wait(AtWarp); }

static void entry() {
    (*running)(*runningArgs);
    fibers[current].state = Done;
    _longjmp(scheduler, 1);
}

// release lets waiting fibers go when their barrier is complete; it
// returns false on a deadlock (fibers wait at different barriers).
static bool release() {
    const unsigned n = fibers.size();
    bool anyBlock = false, allAtBlock = true;
    for (auto& f : fibers) {
        if (f.state == Done) continue;
        anyBlock |= f.state == AtBlock;
        allAtBlock &= f.state == AtBlock;
    }
    bool progress = false;
    if (anyBlock && allAtBlock) {
        for (auto& f : fibers) if (f.state == AtBlock) f.state = Running;
        return true;
    }
    for (unsigned w = 0; w < (n + 31) / 32; w++) {
        bool any = false, all = true;
        for (unsigned t = w * 32; t < std::min(n, w * 32 + 32); t++) {
            if (fibers[t].state == Done) continue;
            any |= fibers[t].state == AtWarp;
            all &= fibers[t].state == AtWarp;
        }
        if (any && all) {
            for (unsigned t = w * 32; t < std::min(n, w * 32 + 32); t++) {
                if (fibers[t].state == AtWarp) fibers[t].state = Running;
            }
            progress = true;
        }
    }
    return progress;
}

static std::string launch(const Kernel& k, dim3 grid, dim3 block, const std::vector<Slot>& args) {
    const unsigned n = block.x * block.y * block.z;
    fibers.assign(n, Fiber{});
    if (stacks.size() < n * stackSize) stacks.resize(n * stackSize);
    std::vector<uint64_t> slots(n);
    simt_slots = slots.data();
    running = &k;
    runningArgs = &args;
    blockDim = block;
    gridDim = grid;
    for (unsigned bz = 0; bz < grid.z; bz++)
    for (unsigned by = 0; by < grid.y; by++)
    for (unsigned bx = 0; bx < grid.x; bx++) {
        blockIdx = {bx, by, bz};
        for (unsigned t = 0; t < n; t++) {
            Fiber& f = fibers[t];
            f.state = Running;
            f.started = false;
            f.idx = {t % block.x, (t / block.x) % block.y, t / (block.x * block.y)};
            getcontext(&f.ctx);
            f.ctx.uc_stack.ss_sp = stacks.data() + t * stackSize;
            f.ctx.uc_stack.ss_size = stackSize;
            f.ctx.uc_link = nullptr;
            makecontext(&f.ctx, entry, 0);
        }
        for (;;) {
            bool ran = false, live = false;
            for (unsigned t = 0; t < n; t++) {
                if (fibers[t].state == Done) continue;
                live = true;
                if (fibers[t].state != Running) continue;
                current = t;
                threadIdx = fibers[t].idx;
                if (!_setjmp(scheduler)) {
                    if (fibers[t].started) _longjmp(fibers[t].jb, 1);
                    fibers[t].started = true;
                    setcontext(&fibers[t].ctx);
                }
                ran = true;
            }
            if (!live) break;
            if (!ran && !release()) return "deadlock: threads wait at different barriers";
        }
    }
    return "";
}

static bool readAll(void* p, size_t n) { return fread(p, 1, n, stdin) == n; }
template <typename T> static T get() { T v{}; if (!readAll(&v, sizeof v)) exit(0); return v; }
static void ok() { fputc(0, stdout); }
static void fail(const std::string& m) {
    fputc(1, stdout);
    uint32_t n = m.size();
    fwrite(&n, 4, 1, stdout);
    fwrite(m.data(), 1, n, stdout);
}

int main() {
    auto table = kernels();
    std::unordered_map<uint64_t, size_t> allocs;
    for (;;) {
        int c = fgetc(stdin);
        if (c == EOF) return 0;
        switch (c) {
        case 'A': {
            uint64_t n = get<uint64_t>();
            void* p = std::aligned_alloc(256, (n + 255) / 256 * 256);
            std::memset(p, 0xA5, n); // uninitialised device memory is not zero
            allocs[(uint64_t)(uintptr_t)p] = n;
            ok();
            uint64_t a = (uint64_t)(uintptr_t)p;
            fwrite(&a, 8, 1, stdout);
            break;
        }
        case 'F': {
            uint64_t a = get<uint64_t>();
            if (!allocs.erase(a)) { fail("free of a pointer that is not an allocation"); break; }
            std::free((void*)(uintptr_t)a);
            ok();
            break;
        }
        case 'U': {
            uint64_t a = get<uint64_t>(), n = get<uint64_t>();
            readAll((void*)(uintptr_t)a, n);
            ok();
            break;
        }
        case 'D': {
            uint64_t a = get<uint64_t>(), n = get<uint64_t>();
            ok();
            fwrite((void*)(uintptr_t)a, 1, n, stdout);
            break;
        }
        case 'C': {
            uint64_t d = get<uint64_t>(), s = get<uint64_t>(), n = get<uint64_t>();
            std::memmove((void*)(uintptr_t)d, (void*)(uintptr_t)s, n);
            ok();
            break;
        }
        case 'L': {
            uint32_t len = get<uint32_t>();
            std::string name(len, '\0');
            readAll(name.data(), len);
            dim3 grid{get<uint32_t>(), get<uint32_t>(), get<uint32_t>()};
            dim3 block{get<uint32_t>(), get<uint32_t>(), get<uint32_t>()};
            uint32_t nargs = get<uint32_t>();
            std::vector<Slot> args(nargs);
            for (auto& a : args) a.v = get<uint64_t>();
            auto it = table.find(name);
            if (it == table.end()) { fail("no kernel " + name); break; }
            std::string err = launch(it->second, grid, block, args);
            if (!err.empty()) { fail(name + ": " + err); break; }
            ok();
            break;
        }
        default:
            fail("unknown command");
            return 1;
        }
        fflush(stdout);
    }
}
