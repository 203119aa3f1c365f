//! Evidence of GPUs that the OpenCL loader does not show, and the words a run uses when it
//! lands on a CPU OpenCL device although the machine has GPUs.
//!
//! The loader (ocl-icd or Khronos') loads the libraries named by `OCL_ICD_FILENAMES` (when
//! set), or by the `.icd` files of `$OCL_ICD_VENDORS` / `$OPENCL_VENDOR_PATH` /
//! `/etc/OpenCL/vendors`. A GPU can be on the machine and still be missing from
//! [`super::opencl::list_devices`]: `mpirun` cuts `OCL_ICD_FILENAMES` at its first colon,
//! an image may ship NVIDIA's OpenCL library without its `.icd` file, a vendor library may
//! fail to load. [`hidden_gpus`] collects what points at such a GPU when no GPU is visible:
//!
//! - a vendor ICD (a `.icd` file or an `OCL_ICD_FILENAMES` entry) naming a GPU vendor's
//!   library (NVIDIA, AMD, Intel's GPU runtime) while no platform of that vendor is listed;
//! - NVIDIA's or AMD's kernel driver: `/proc/driver/nvidia/gpus/*`, `/dev/nvidia<N>`,
//!   `/dev/kfd`.
//!
//! Nothing here loads a library or calls OpenCL: it reads files and the environment, so it
//! is safe to call on every rank and testable with a temporary `OCL_ICD_VENDORS` folder
//! (a fake `nvidia.icd` next to a copy of PoCL's) or a temporary file-system root
//! ([`hidden_gpus_at`]).

use super::opencl::DeviceInfo;
use std::path::{Path, PathBuf};

/// The loader's environment variables that decide which OpenCL libraries a process sees.
pub const LOADER_VARS: [&str; 3] = ["OCL_ICD_FILENAMES", "OCL_ICD_VENDORS", "OPENCL_VENDOR_PATH"];

/// GPU vendors recognised in library names: (vendor as platforms spell it, library name
/// fragments, the library to name in the recipe).
const VENDORS: [(&str, &[&str], &str); 3] = [
    ("NVIDIA", &["nvidia"], "libnvidia-opencl.so.1"),
    ("AMD", &["amdocl", "amdrocl", "rocm"], "libamdocl64.so"),
    ("Intel", &["igdrcl", "intel-opencl"], "libigdrcl.so"),
];

/// One piece of evidence of a GPU the loader does not show.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hidden {
    /// What was found, in words (a file and what it names, a device node).
    pub what: String,
    /// The OpenCL library that would show it (for the recipe).
    pub library: &'static str,
}

/// The loader's environment: `(name, value)` of each of [`LOADER_VARS`] (None: unset).
pub fn loader_env() -> Vec<(&'static str, Option<String>)> {
    LOADER_VARS
        .iter()
        .map(|&k| (k, std::env::var(k).ok()))
        .collect()
}

/// `OCL_ICD_FILENAMES=…, OCL_ICD_VENDORS=(unset), …` for messages.
pub fn loader_env_line() -> String {
    loader_env()
        .iter()
        .map(|(k, v)| match v {
            Some(v) => format!("{k}={v:?}"),
            None => format!("{k} unset"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Evidence of GPUs the loader does not show, given the devices it does show: empty when a
/// GPU is visible or nothing points at one.
pub fn hidden_gpus(visible: &[DeviceInfo]) -> Vec<Hidden> {
    let env: Vec<(&str, Option<String>)> = loader_env();
    hidden_gpus_at(Path::new("/"), &env, visible)
}

/// [`hidden_gpus`] with the file-system root and the loader's environment given.
pub fn hidden_gpus_at(
    root: &Path,
    env: &[(&str, Option<String>)],
    visible: &[DeviceInfo],
) -> Vec<Hidden> {
    if visible.iter().any(DeviceInfo::is_gpu) {
        return Vec::new();
    }
    let var = |k: &str| {
        env.iter()
            .find(|(n, _)| *n == k)
            .and_then(|(_, v)| v.clone())
            .filter(|v| !v.is_empty())
    };
    let shown = |vendor: &str| {
        let v = vendor.to_lowercase();
        visible.iter().any(|d| {
            format!("{} {}", d.platform, d.vendor)
                .to_lowercase()
                .contains(&v)
        })
    };
    let mut out = Vec::new();
    for (source, lib) in icd_libraries(
        root,
        var("OCL_ICD_FILENAMES"),
        var("OCL_ICD_VENDORS"),
        var("OPENCL_VENDOR_PATH"),
    ) {
        let low = lib.to_lowercase();
        if let Some((vendor, _, recipe)) = VENDORS
            .iter()
            .find(|(_, frags, _)| frags.iter().any(|f| low.contains(f)))
            && !shown(vendor)
        {
            out.push(Hidden {
                what: format!(
                    "{source} names {lib}, but no {vendor} OpenCL platform is listed (the library did not load, or the loader was not given it)"
                ),
                library: recipe,
            });
        }
    }
    out.extend(driver_nodes(root));
    out
}

/// The libraries the loader is told about: `(where it was named, library)`.
fn icd_libraries(
    root: &Path,
    filenames: Option<String>,
    vendors: Option<String>,
    vendor_path: Option<String>,
) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    if let Some(f) = filenames {
        for lib in f.split(':').filter(|s| !s.is_empty()) {
            out.push(("OCL_ICD_FILENAMES".into(), lib.to_string()));
        }
    }
    let dir_of = |p: &str| at(root, p);
    let mut icd_files: Vec<PathBuf> = Vec::new();
    match vendors {
        Some(v) if dir_of(&v).is_dir() => icd_files.extend(icd_files_in(&dir_of(&v))),
        Some(v) if v.ends_with(".icd") => icd_files.push(dir_of(&v)),
        Some(v) => out.push(("OCL_ICD_VENDORS".into(), v)),
        None => {
            let d = dir_of(vendor_path.as_deref().unwrap_or("/etc/OpenCL/vendors"));
            icd_files.extend(icd_files_in(&d));
        }
    }
    for f in icd_files {
        if let Ok(t) = std::fs::read_to_string(&f)
            && let Some(lib) = t.lines().map(str::trim).find(|l| !l.is_empty())
        {
            out.push((f.display().to_string(), lib.to_string()));
        }
    }
    out
}

/// `p` under `root` (absolute paths re-rooted; relative ones as they are).
fn at(root: &Path, p: &str) -> PathBuf {
    match Path::new(p).strip_prefix("/") {
        Ok(rel) => root.join(rel),
        Err(_) => PathBuf::from(p),
    }
}

fn icd_files_in(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "icd"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// NVIDIA's and AMD's kernel drivers' traces: GPUs the machine has whatever OpenCL shows.
fn driver_nodes(root: &Path) -> Vec<Hidden> {
    let mut out = Vec::new();
    let gpus = at(root, "/proc/driver/nvidia/gpus");
    let n = std::fs::read_dir(&gpus).map(|d| d.count()).unwrap_or(0);
    let dev_nodes = std::fs::read_dir(at(root, "/dev"))
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter(|e| {
                    let n = e.file_name().to_string_lossy().into_owned();
                    n.strip_prefix("nvidia")
                        .is_some_and(|r| !r.is_empty() && r.bytes().all(|b| b.is_ascii_digit()))
                })
                .count()
        })
        .unwrap_or(0);
    if n > 0 {
        out.push(Hidden {
            what: format!("NVIDIA's driver lists {n} GPU(s) in /proc/driver/nvidia/gpus"),
            library: "libnvidia-opencl.so.1",
        });
    } else if dev_nodes > 0 {
        out.push(Hidden {
            what: format!("{dev_nodes} NVIDIA device node(s) /dev/nvidia<N>"),
            library: "libnvidia-opencl.so.1",
        });
    }
    if at(root, "/dev/kfd").exists() {
        out.push(Hidden {
            what: "AMD's compute driver node /dev/kfd".into(),
            library: "libamdocl64.so",
        });
    }
    out
}

/// The environment recipe that shows the GPU library `library` to every rank.
pub fn recipe(library: &str) -> String {
    format!(
        "export OCL_ICD_FILENAMES={library}, then mpirun -x OCL_ICD_FILENAMES … (mpirun cuts a value at its colons, so name only the GPU's library; one process needs only the export)"
    )
}

/// The platforms and devices a process sees, in one line: `NVIDIA CUDA: 2 x GPU NVIDIA H100;
/// Portable Computing Language: CPU pthread-…`, or why none.
pub fn seen_line(visible: &crate::error::Result<Vec<DeviceInfo>>) -> String {
    match visible {
        Err(e) => format!("no OpenCL device ({e})"),
        Ok(v) if v.is_empty() => "no OpenCL device".into(),
        Ok(v) => {
            let mut platforms: Vec<(String, Vec<String>)> = Vec::new();
            for d in v {
                let what = format!("#{} {} {}", d.index, d.kind, d.name);
                match platforms.iter_mut().find(|(p, _)| *p == d.platform) {
                    Some((_, l)) => l.push(what),
                    None => platforms.push((d.platform.clone(), vec![what])),
                }
            }
            platforms
                .iter()
                .map(|(p, l)| format!("{p}: {}", l.join(", ")))
                .collect::<Vec<_>>()
                .join("; ")
        }
    }
}

/// The warning of a run that lands on the CPU, on OpenCL device `on` (None: the CPU
/// backend), while `hidden` points at GPUs: the evidence, what the process sees, the
/// loader's environment and the recipe.
pub fn hidden_warning(
    on: Option<&DeviceInfo>,
    visible: &crate::error::Result<Vec<DeviceInfo>>,
    hidden: &[Hidden],
) -> String {
    let (running, on_purpose) = match on {
        Some(d) => (
            format!(
                "the CPU OpenCL device {} ({} / {})",
                d.index, d.platform, d.name
            ),
            format!("name it with --device {} (or give --backend cpu)", d.index),
        ),
        None => (
            "the CPU backend".to_string(),
            "give --backend cpu".to_string(),
        ),
    };
    format!(
        "running on {running} although this machine seems to have a GPU that OpenCL does not show: {}. OpenCL here sees: {}; {}. To run on the GPU: {}; to run on the CPU on purpose, {on_purpose}",
        evidence_line(hidden),
        seen_line(visible),
        loader_env_line(),
        recipe(recipe_library(hidden)),
    )
}

/// The evidence in one line.
pub fn evidence_line(hidden: &[Hidden]) -> String {
    hidden
        .iter()
        .map(|h| h.what.as_str())
        .collect::<Vec<_>>()
        .join("; ")
}

/// The library the recipe names: the first evidence's, else NVIDIA's.
pub fn recipe_library(hidden: &[Hidden]) -> &'static str {
    hidden
        .first()
        .map_or("libnvidia-opencl.so.1", |h| h.library)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu() -> DeviceInfo {
        DeviceInfo {
            index: 0,
            platform: "Portable Computing Language".into(),
            name: "cpu".into(),
            vendor: "GenuineIntel".into(),
            kind: "CPU".into(),
            compute_units: 2,
            global_mem: 1,
            max_alloc: 1,
            fp64: true,
            local_mem: 1,
            max_work_group: 1,
            opencl_c: String::new(),
            driver: String::new(),
            id: 0,
        }
    }

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("dgatd-disc-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn nvidia_icd_without_its_platform_is_evidence() {
        let root = scratch("icd");
        let v = root.join("vendors");
        std::fs::create_dir_all(&v).unwrap();
        std::fs::write(v.join("pocl.icd"), "libpocl.so.2\n").unwrap();
        std::fs::write(v.join("nvidia.icd"), "libnvidia-opencl.so.1\n").unwrap();
        // absolute paths are read under the root given
        let env = [("OCL_ICD_VENDORS", Some("/vendors".to_string()))];
        let h = hidden_gpus_at(&root, &env, &[cpu()]);
        assert_eq!(h.len(), 1, "{h:?}");
        assert!(h[0].what.contains("nvidia.icd") && h[0].what.contains("libnvidia-opencl.so.1"));
        // a listed NVIDIA platform, or a visible GPU, is no evidence
        let mut nv = cpu();
        nv.platform = "NVIDIA CUDA".into();
        assert!(hidden_gpus_at(&root, &env, &[cpu(), nv.clone()]).is_empty());
        nv.kind = "GPU".into();
        assert!(hidden_gpus_at(&root, &env, &[nv]).is_empty());
        // PoCL's ICD alone is none
        std::fs::remove_file(v.join("nvidia.icd")).unwrap();
        assert!(hidden_gpus_at(&root, &env, &[cpu()]).is_empty());
        let _ = std::fs::remove_dir_all(root);
    }

    #[test]
    fn ocl_icd_filenames_and_driver_nodes_are_evidence() {
        let root = scratch("nodes");
        let env = [(
            "OCL_ICD_FILENAMES",
            Some("libpocl.so.2:libnvidia-opencl.so.1".into()),
        )];
        let h = hidden_gpus_at(&root, &env, &[cpu()]);
        assert_eq!(h.len(), 1, "{h:?}");
        assert!(h[0].what.starts_with("OCL_ICD_FILENAMES names libnvidia"));
        assert!(hidden_gpus_at(&root, &[], &[cpu()]).is_empty());
        std::fs::create_dir_all(root.join("proc/driver/nvidia/gpus/0000:01:00.0")).unwrap();
        std::fs::create_dir_all(root.join("dev")).unwrap();
        std::fs::write(root.join("dev/nvidiactl"), "").unwrap();
        std::fs::write(root.join("dev/kfd"), "").unwrap();
        let h = hidden_gpus_at(&root, &[], &[cpu()]);
        assert_eq!(h.len(), 2, "{h:?}");
        assert!(h[0].what.contains("1 GPU(s)") && h[0].library == "libnvidia-opencl.so.1");
        assert!(h[1].what.contains("/dev/kfd"));
        // the device nodes alone (no /proc entry): /dev/nvidiactl is not a GPU, nvidia0 is
        std::fs::remove_dir_all(root.join("proc")).unwrap();
        std::fs::remove_file(root.join("dev/kfd")).unwrap();
        assert!(hidden_gpus_at(&root, &[], &[cpu()]).is_empty());
        std::fs::write(root.join("dev/nvidia0"), "").unwrap();
        let h = hidden_gpus_at(&root, &[], &[cpu()]);
        assert!(
            h.len() == 1 && h[0].what.contains("1 NVIDIA device node"),
            "{h:?}"
        );
        let _ = std::fs::remove_dir_all(root);
    }

    #[test]
    fn the_warning_names_evidence_environment_and_recipe() {
        let h = [Hidden {
            what: "NVIDIA's driver lists 4 GPU(s)".into(),
            library: "libnvidia-opencl.so.1",
        }];
        let w = hidden_warning(Some(&cpu()), &Ok(vec![cpu()]), &h);
        for s in [
            "4 GPU(s)",
            "Portable Computing Language: #0 CPU cpu",
            "OCL_ICD_FILENAMES",
            "OCL_ICD_VENDORS",
            "export OCL_ICD_FILENAMES=libnvidia-opencl.so.1",
            "mpirun -x OCL_ICD_FILENAMES",
            "--device 0",
        ] {
            assert!(w.contains(s), "{s:?} not in {w}");
        }
    }
}
