//! The extension's allocator: mimalloc, asked the cheapest way.
//!
//! `mimalloc::MiMalloc` calls `mi_malloc_aligned` for every allocation,
//! which walks mimalloc's aligned path (about as long as the allocation
//! itself) even for the alignments `mi_malloc` guarantees anyway. Here the
//! common case, an alignment of at most 16 bytes that is not larger than
//! the size (the rule of Rust's own `System` allocator on x86-64 and
//! aarch64), goes to `mi_malloc` / `mi_zalloc` / `mi_realloc`; anything
//! else to `MiMalloc`. Frees are `mi_free` either way.

use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

use mimalloc::MiMalloc;

// mimalloc's C API, from the library the `mimalloc` crate links.
extern "C" {
    fn mi_malloc(size: usize) -> *mut c_void;
    fn mi_zalloc(size: usize) -> *mut c_void;
    fn mi_realloc(pointer: *mut c_void, size: usize) -> *mut c_void;
}

/// What `mi_malloc` aligns every block of at least this size to
/// (`MI_MAX_ALIGN_SIZE`).
const MALLOC_ALIGN: usize = 16;

pub(crate) struct Allocator;

fn plain(layout: &Layout) -> bool {
    layout.align() <= MALLOC_ALIGN && layout.align() <= layout.size()
}

// SAFETY: every block comes from mimalloc, aligned as its layout asks
// (`plain` layouts by mimalloc's guarantee, the others by
// `mi_malloc_aligned`), and every block is freed by `mi_free`, whichever
// call made it.
unsafe impl GlobalAlloc for Allocator {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if plain(&layout) {
            unsafe { mi_malloc(layout.size()).cast() }
        } else {
            unsafe { MiMalloc.alloc(layout) }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if plain(&layout) {
            unsafe { mi_zalloc(layout.size()).cast() }
        } else {
            unsafe { MiMalloc.alloc_zeroed(layout) }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, pointer: *mut u8, layout: Layout) {
        unsafe { MiMalloc.dealloc(pointer, layout) }
    }

    #[inline]
    unsafe fn realloc(&self, pointer: *mut u8, layout: Layout, size: usize) -> *mut u8 {
        if layout.align() <= MALLOC_ALIGN && layout.align() <= size {
            unsafe { mi_realloc(pointer.cast(), size).cast() }
        } else {
            unsafe { MiMalloc.realloc(pointer, layout, size) }
        }
    }
}
