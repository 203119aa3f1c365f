//! Device listing and choice: every device of every OpenCL platform, described, and the
//! choice of one by index, by name, or by default (the first GPU, else the first CPU).

use crate::error::{Error, Result};
use opencl3::device::{CL_DEVICE_TYPE_ALL, CL_DEVICE_TYPE_CPU, CL_DEVICE_TYPE_GPU, Device};
use opencl3::platform::get_platforms;

/// One OpenCL device as the runtime describes it.
#[derive(Clone, Debug, serde::Serialize)]
pub struct DeviceInfo {
    /// Position in the flat list of all devices of all platforms.
    pub index: usize,
    pub platform: String,
    pub name: String,
    pub vendor: String,
    pub kind: String,
    pub compute_units: u32,
    pub global_mem: u64,
    pub max_alloc: u64,
    pub fp64: bool,
    /// Local memory per work-group, bytes (`CL_DEVICE_LOCAL_MEM_SIZE`).
    pub local_mem: u64,
    /// Largest work-group (`CL_DEVICE_MAX_WORK_GROUP_SIZE`).
    pub max_work_group: usize,
    pub opencl_c: String,
    pub driver: String,
    #[serde(skip)]
    pub id: usize,
}

impl DeviceInfo {
    pub fn is_gpu(&self) -> bool {
        self.kind == "GPU"
    }
    pub fn is_cpu(&self) -> bool {
        self.kind == "CPU"
    }
}

/// Every device of every platform. Fails with a clear message when no OpenCL runtime
/// (libOpenCL.so.1) or no platform is found. Enumeration is serialised and its first
/// success cached: some ICDs (PoCL) fail when several threads enumerate at once.
pub fn list_devices() -> Result<Vec<DeviceInfo>> {
    static CACHE: std::sync::Mutex<Option<Vec<DeviceInfo>>> = std::sync::Mutex::new(None);
    let mut guard = CACHE.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(v) = guard.as_ref() {
        return Ok(v.clone());
    }
    let v = enumerate()?;
    *guard = Some(v.clone());
    Ok(v)
}

fn enumerate() -> Result<Vec<DeviceInfo>> {
    if !cl3::is_opencl_runtime_available() {
        return Err(Error::NoOpenCl(
            "no OpenCL runtime found (libOpenCL.so.1 could not be loaded; on Debian: apt-get install ocl-icd-libopencl1 pocl-opencl-icd)".into(),
        ));
    }
    let platforms = get_platforms().map_err(|e| Error::NoOpenCl(format!("no OpenCL platform found ({e}); is an ICD installed, and for PoCL is POCL_CACHE_DIR writable?")))?;
    let mut out = Vec::new();
    for p in platforms {
        let pname = p.name().unwrap_or_default();
        let ids = p.get_devices(CL_DEVICE_TYPE_ALL).unwrap_or_default();
        for id in ids {
            let d = Device::new(id);
            let ty = d.dev_type().unwrap_or(0);
            let kind = if ty & CL_DEVICE_TYPE_GPU != 0 {
                "GPU"
            } else if ty & CL_DEVICE_TYPE_CPU != 0 {
                "CPU"
            } else {
                "other"
            };
            let ext = d.extensions().unwrap_or_default();
            out.push(DeviceInfo {
                index: out.len(),
                platform: pname.trim().to_string(),
                name: d.name().unwrap_or_default().trim().to_string(),
                vendor: d.vendor().unwrap_or_default().trim().to_string(),
                kind: kind.to_string(),
                compute_units: d.max_compute_units().unwrap_or(0),
                global_mem: d.global_mem_size().unwrap_or(0),
                max_alloc: d.max_mem_alloc_size().unwrap_or(0),
                fp64: ext.contains("cl_khr_fp64") || d.double_fp_config().unwrap_or(0) != 0,
                local_mem: d.local_mem_size().unwrap_or(0),
                max_work_group: d.max_work_group_size().unwrap_or(0),
                opencl_c: d.opencl_c_version().unwrap_or_default().trim().to_string(),
                driver: d.driver_version().unwrap_or_default().trim().to_string(),
                id: id as usize,
            });
        }
    }
    if out.is_empty() {
        return Err(Error::NoOpenCl(
            "OpenCL platforms found, but no devices".into(),
        ));
    }
    Ok(out)
}

/// Picks a device: `spec` is an index into [`list_devices`] or a case-insensitive
/// substring of "platform name"; without `spec`, the first GPU, else the first CPU device.
pub fn select_device(spec: Option<&str>) -> Result<DeviceInfo> {
    let all = list_devices()?;
    match spec {
        Some(s) => {
            if let Ok(i) = s.parse::<usize>() {
                return all.get(i).cloned().ok_or_else(|| {
                    Error::config(
                        "device",
                        s,
                        format!("there are {} OpenCL devices (see dgatd devices)", all.len()),
                    )
                });
            }
            let low = s.to_lowercase();
            all.iter()
                .find(|d| {
                    format!("{} {}", d.platform, d.name)
                        .to_lowercase()
                        .contains(&low)
                })
                .cloned()
                .ok_or_else(|| {
                    Error::config(
                        "device",
                        s,
                        "no OpenCL device name contains it (see dgatd devices)",
                    )
                })
        }
        None => all
            .iter()
            .find(|d| d.is_gpu())
            .or_else(|| all.iter().find(|d| d.is_cpu()))
            .or(all.first())
            .cloned()
            .ok_or_else(|| Error::NoOpenCl("no device".into())),
    }
}

/// The `-cl-std` option for a device whose `CL_DEVICE_OPENCL_C_VERSION` is `opencl_c`
/// ("OpenCL C <major>.<minor> <vendor text>"): `-cl-std=CL1.2`, the version every kernel is
/// written for, or `-cl-std=CL1.1` / `CL1.0` on a device that only compiles those (the
/// kernels use nothing newer than OpenCL C 1.0 plus `restrict`). A device reporting 2.x or
/// 3.x still compiles 1.2 (it must accept `-cl-std=CL1.2`), which keeps the language, and so
/// the arithmetic, the same on every implementation. An unreadable string gives CL1.2.
pub fn cl_std_option(opencl_c: &str) -> &'static str {
    let version = opencl_c
        .trim()
        .strip_prefix("OpenCL C ")
        .and_then(|r| r.split_whitespace().next())
        .and_then(|v| {
            let (a, b) = v.split_once('.')?;
            Some((a.parse::<u32>().ok()?, b.parse::<u32>().ok()?))
        });
    match version {
        Some((1, 0)) => "-cl-std=CL1.0",
        Some((1, 1)) => "-cl-std=CL1.1",
        _ => "-cl-std=CL1.2",
    }
}
