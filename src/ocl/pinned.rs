//! Pinned host staging buffers (OpenCL runtime layer, no physics).
//!
//! A buffer created with `CL_MEM_ALLOC_HOST_PTR` and mapped once for the buffer's lifetime
//! gives page-locked host memory on NVIDIA's and AMD's runtimes: a read or write between a
//! device buffer and that host pointer runs by DMA at the bus's full rate (pageable host
//! memory goes through the driver's own bounce buffer: 13–15 GB/s measured on the H200
//! machine, `results/scaling/h200x2/`). The halo exchange of a partitioned run stages
//! through these ([`crate::partition::ClPartStepper`]). On PoCL and Oclgrind the mapping
//! is ordinary host memory, and the copies are the same copies.

use super::{ClDevice, cl_err};
use crate::error::{Error, Result};
use opencl3::memory::{
    Buffer, CL_MAP_READ, CL_MAP_WRITE, CL_MEM_ALLOC_HOST_PTR, CL_MEM_READ_WRITE, ClMem,
};
use opencl3::types::{CL_BLOCKING, cl_mem};
use std::ptr;
use std::sync::Arc;

/// `n` elements of page-locked host memory, mapped for the host for its whole life.
pub struct Pinned<T> {
    dev: Arc<ClDevice>,
    buf: Buffer<T>,
    ptr: *mut T,
    n: usize,
}

// SAFETY: the mapped region is owned by this value alone (no other handle to it is given
// out except through `&self`/`&mut self` borrows), so moving it to another thread moves
// the only access to it; OpenCL objects are thread-safe (OpenCL 1.2 §A.2).
unsafe impl<T: Send> Send for Pinned<T> {}

impl<T: Copy + Default> Pinned<T> {
    /// The host slice (all `n` elements, zeroed at creation).
    pub fn as_slice(&self) -> &[T] {
        // SAFETY: `ptr` points to `n` mapped, initialised elements for the value's life;
        // no device command writes to it except inside `ClDevice::read_pinned`, which
        // takes `&mut self` and blocks until the copy is done.
        unsafe { std::slice::from_raw_parts(self.ptr, self.n) }
    }

    /// The host slice, mutable.
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        // SAFETY: as in `as_slice`, and `&mut self` makes this the only access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.n) }
    }

    pub fn len(&self) -> usize {
        self.n
    }

    pub fn is_empty(&self) -> bool {
        self.n == 0
    }
}

impl<T: crate::real::Real> Pinned<T> {
    /// The elements `at..at + len` of each run of `lens`, consecutive from the start, as
    /// bytes (a halo's values per neighbour, for a transport that moves bytes).
    pub fn byte_runs(&self, lens: impl Iterator<Item = usize>) -> Vec<&[u8]> {
        let b = self.bytes();
        let w = std::mem::size_of::<T>();
        let mut at = 0;
        lens.map(|n| {
            let r = &b[at * w..(at + n) * w];
            at += n;
            r
        })
        .collect()
    }

    /// [`Self::byte_runs`], mutable.
    pub fn byte_runs_mut(&mut self, lens: impl Iterator<Item = usize>) -> Vec<&mut [u8]> {
        let w = std::mem::size_of::<T>();
        let mut rest = self.bytes_mut();
        lens.map(|n| {
            let (r, tail) = std::mem::take(&mut rest).split_at_mut(n * w);
            rest = tail;
            r
        })
        .collect()
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: `T` is f32 or f64 (`Real`), plain values with no padding and no invalid
        // bit patterns, so the `n` initialised elements are `n * size_of::<T>()` initialised
        // bytes; the borrow of `self` bounds the slice's life as in `as_slice`.
        unsafe {
            std::slice::from_raw_parts(self.ptr as *const u8, self.n * std::mem::size_of::<T>())
        }
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `bytes`; any bytes written make valid f32/f64 values, and `&mut
        // self` makes this the only access.
        unsafe {
            std::slice::from_raw_parts_mut(self.ptr as *mut u8, self.n * std::mem::size_of::<T>())
        }
    }
}

impl<T> Drop for Pinned<T> {
    fn drop(&mut self) {
        // SAFETY: `ptr` is the mapping of `buf` made in `ClDevice::pinned`, unmapped once
        // here; the queue is finished so that the unmap completes before `buf` is released.
        unsafe {
            let _ =
                self.dev
                    .queue
                    .enqueue_unmap_mem_object(self.buf.get(), self.ptr as *mut _, &[]);
        }
        let _ = self.dev.queue.finish();
    }
}

impl ClDevice {
    /// `n` elements of pinned host memory, zeroed ([`Pinned`]).
    pub fn pinned<T: Copy + Default>(self: &Arc<Self>, n: usize, what: &str) -> Result<Pinned<T>> {
        let len = n.max(1);
        let bytes = len * std::mem::size_of::<T>();
        // SAFETY: no host pointer is passed (null): OpenCL allocates host-accessible memory
        // of `len` elements and owns it until the buffer is released.
        let buf = unsafe {
            Buffer::<T>::create(
                &self.context,
                CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR,
                len,
                ptr::null_mut(),
            )
        }
        .map_err(cl_err(what))?;
        let mut p: cl_mem = ptr::null_mut();
        // SAFETY: a blocking map of the whole buffer for reading and writing; `p` receives
        // the host address of `bytes` bytes, valid until the unmap in `Drop`.
        unsafe {
            self.queue.enqueue_map_buffer(
                &buf,
                CL_BLOCKING,
                CL_MAP_READ | CL_MAP_WRITE,
                0,
                bytes,
                &mut p,
                &[],
            )
        }
        .map_err(cl_err(what))?;
        if p.is_null() {
            return Err(Error::DeviceMemory(format!(
                "{what}: mapping {bytes} bytes of pinned host memory returned no address"
            )));
        }
        let ptr = p as *mut T;
        // SAFETY: `ptr` addresses `len` elements of T just mapped for writing; T is Copy.
        unsafe { std::slice::from_raw_parts_mut(ptr, len) }.fill(T::default());
        Ok(Pinned {
            dev: self.clone(),
            buf,
            ptr,
            n: len,
        })
    }

    /// Reads the first `n` elements of `b` into `p` (blocking, main queue: after the main
    /// queue's earlier commands).
    pub fn read_pinned<T: Copy + Default>(
        &self,
        b: &Buffer<T>,
        p: &mut Pinned<T>,
        n: usize,
        what: &str,
    ) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        let len = p.n;
        let out = p.as_mut_slice().get_mut(..n).ok_or_else(|| {
            Error::DeviceMemory(format!("{what}: {n} elements read into {len} pinned"))
        })?;
        // SAFETY: blocking read of n elements into the exclusively borrowed mapped slice;
        // `b` holds at least n elements (the caller's staging buffer of the same size).
        unsafe { self.queue.enqueue_read_buffer(b, CL_BLOCKING, 0, out, &[]) }
            .map_err(cl_err(what))?;
        Ok(())
    }

    /// Writes the first `n` elements of `p` into `b` (blocking, main queue).
    pub fn write_pinned<T: Copy + Default>(
        &self,
        b: &mut Buffer<T>,
        p: &Pinned<T>,
        n: usize,
        what: &str,
    ) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        let data = p.as_slice().get(..n).ok_or_else(|| {
            Error::DeviceMemory(format!("{what}: {n} elements written from {} pinned", p.n))
        })?;
        // SAFETY: blocking write of n elements from the mapped slice, borrowed for the call;
        // `b` holds at least n elements.
        unsafe {
            self.queue
                .enqueue_write_buffer(b, CL_BLOCKING, 0, data, &[])
        }
        .map_err(cl_err(what))?;
        Ok(())
    }
}
