//! Device set-up, separate from the work (as in wgpu's compute examples): tests and the app
//! create one context and pass it to everything that dispatches.

use std::sync::{Arc, Mutex};

use super::GpuError;

/// An adapter, its device and queue, and the errors the device reported outside error scopes.
#[derive(Debug, Clone)]
pub struct GpuContext {
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pub adapter_name: String,
    /// Whether the browser disclosed the adapter's name (otherwise `adapter_name` is a
    /// description, and a UI may say so in its own words).
    pub name_disclosed: bool,
    pub backend: String,
    /// Nanoseconds per timestamp tick, where the adapter offers timestamp queries (the engines
    /// time each run's optimizer step with them); none where it does not.
    pub timestamp_period_ns: Option<f32>,
    errors: Arc<Mutex<Vec<GpuError>>>,
}

impl GpuContext {
    /// Requests an adapter and a device; never panics, and says why when there is none.
    pub async fn new() -> Result<Self, GpuError> {
        let mut descriptor = wgpu::InstanceDescriptor::new_without_display_handle();
        descriptor.backends = if cfg!(target_arch = "wasm32") {
            wgpu::Backends::BROWSER_WEBGPU
        } else {
            wgpu::Backends::VULKAN
        };
        let instance = wgpu::Instance::new(descriptor);
        let adapter = instance
            .request_adapter(&wgpu::RequestAdapterOptions {
                power_preference: wgpu::PowerPreference::HighPerformance,
                ..wgpu::RequestAdapterOptions::default()
            })
            .await
            .map_err(|e| GpuError::NoAdapter(e.to_string()))?;
        let info = adapter.get_info();
        let timestamps = adapter.features().contains(wgpu::Features::TIMESTAMP_QUERY);
        let (device, queue) = adapter
            .request_device(&wgpu::DeviceDescriptor {
                label: Some("gradlab"),
                required_features: if timestamps {
                    wgpu::Features::TIMESTAMP_QUERY
                } else {
                    wgpu::Features::empty()
                },
                required_limits: wgpu::Limits::default().using_resolution(adapter.limits()),
                ..wgpu::DeviceDescriptor::default()
            })
            .await
            .map_err(|e| GpuError::Device(e.to_string()))?;
        let errors = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&errors);
        device.on_uncaptured_error(Arc::new(move |error: wgpu::Error| {
            let error = match error {
                wgpu::Error::OutOfMemory { .. } => GpuError::OutOfMemory(error.to_string()),
                other => GpuError::Validation(other.to_string()),
            };
            if let Ok(mut list) = sink.lock() {
                list.push(error);
            }
        }));
        let lost = Arc::clone(&errors);
        device.set_device_lost_callback(move |reason, message| {
            if let Ok(mut list) = lost.lock() {
                list.push(GpuError::DeviceLost(format!("{reason:?}: {message}")));
            }
        });
        // Browsers may hide the adapter's name; say so rather than show nothing.
        let name_disclosed = !info.name.trim().is_empty();
        let adapter_name = if !name_disclosed {
            let vendor = [info.vendor.to_string(), info.driver.clone()]
                .into_iter()
                .filter(|s| !s.is_empty() && s != "0")
                .collect::<Vec<_>>()
                .join(" ");
            if vendor.is_empty() {
                "WebGPU adapter (name not disclosed by the browser)".to_string()
            } else {
                format!("WebGPU adapter ({vendor})")
            }
        } else {
            info.name
        };
        let timestamp_period_ns = timestamps.then(|| queue.get_timestamp_period());
        Ok(Self {
            device,
            queue,
            adapter_name,
            name_disclosed,
            backend: format!("{:?}", info.backend),
            timestamp_period_ns,
            errors,
        })
    }

    /// Errors reported since the last call (uncaptured validation errors, device loss).
    pub fn take_errors(&self) -> Vec<GpuError> {
        self.errors
            .lock()
            .map(|mut list| std::mem::take(&mut *list))
            .unwrap_or_default()
    }

    /// A storage buffer initialized from `values` (zeros after them up to whole vec4s).
    pub fn storage_buffer(&self, label: &str, values: &[f32]) -> wgpu::Buffer {
        use wgpu::util::DeviceExt;
        let mut contents = values.to_vec();
        contents.resize(whole_vec4s(values.len()), 0.0);
        self.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(label),
            contents: bytemuck::cast_slice(&contents),
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
        })
    }

    /// A zeroed storage buffer of at least `len` f32 values (whole vec4s).
    pub fn zeroed_buffer(&self, label: &str, len: usize) -> wgpu::Buffer {
        self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: (4 * whole_vec4s(len)) as u64,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    }

    pub fn uniform_buffer(&self, label: &str, words: &[u32]) -> wgpu::Buffer {
        use wgpu::util::DeviceExt;
        self.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(label),
            contents: bytemuck::cast_slice(words),
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        })
    }
}

/// f32 values in a storage buffer of `len` values: at least one, rounded up to whole vec4s, so
/// that kernels may read any f32 array four values at a time (`array<vec4<f32>>`).
pub fn whole_vec4s(len: usize) -> usize {
    len.max(1).next_multiple_of(4)
}
