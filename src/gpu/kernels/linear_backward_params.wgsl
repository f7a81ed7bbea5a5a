// Adds dW[o, k] += sum_i dy[i, o] * x[i, k] and db[o] += sum_i dy[i, o] into `grads`.
// One invocation per weight, plus one per bias (k == fan_in). Rows are summed in order, as on
// the CPU, so accumulation over micro-batches adds in the same sequence as the full batch.

struct Dims {
    rows: u32,
    fan_in: u32,
    fan_out: u32,
    weight_offset: u32,
    bias_offset: u32,
    x_offset: u32,
    pad0: u32,
    pad1: u32,
}

@group(0) @binding(0) var<uniform> dims: Dims;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> dy: array<f32>;
@group(0) @binding(3) var<storage, read_write> grads: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let columns = dims.fan_in + 1u;
    let index = id.x;
    if index >= dims.fan_out * columns {
        return;
    }
    let o = index / columns;
    let k = index % columns;
    if k == dims.fan_in {
        var acc = grads[dims.bias_offset + o];
        for (var i = 0u; i < dims.rows; i = i + 1u) {
            acc = acc + dy[i * dims.fan_out + o];
        }
        grads[dims.bias_offset + o] = acc;
    } else {
        let slot = dims.weight_offset + o * dims.fan_in + k;
        var acc = grads[slot];
        for (var i = 0u; i < dims.rows; i = i + 1u) {
            acc = acc + dy[i * dims.fan_out + o] * x[dims.x_offset + i * dims.fan_in + k];
        }
        grads[slot] = acc;
    }
}
