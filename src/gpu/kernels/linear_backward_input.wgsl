// dx[i, k] = sum_o dy[i, o] * W[o, k]. One invocation per input element.

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
@group(0) @binding(1) var<storage, read> dy: array<f32>;
@group(0) @binding(2) var<storage, read> params: array<f32>;
@group(0) @binding(3) var<storage, read_write> dx: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let index = id.x;
    if index >= dims.rows * dims.fan_in {
        return;
    }
    let i = index / dims.fan_in;
    let k = index % dims.fan_in;
    var acc = 0.0;
    for (var o = 0u; o < dims.fan_out; o = o + 1u) {
        acc = acc + dy[i * dims.fan_out + o] * params[dims.weight_offset + o * dims.fan_in + k];
    }
    dx[index] = acc;
}
