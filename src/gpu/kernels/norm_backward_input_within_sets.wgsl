// norm_backward_input.wgsl for LayerNorm- and GroupNorm-shaped sets (see
// norm_forward_within_sets.wgsl): one invocation per set, four items at a time.
// dz = rstd / n * (n * dxhat - sum(dxhat) - xhat * sum(dxhat * xhat)), dxhat = dout * gamma.

@group(0) @binding(0) var<uniform> dims: NormParams;
@group(0) @binding(1) var<storage, read> dout: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> xhat: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> stats: array<f32>;
@group(0) @binding(4) var<storage, read> params: array<f32>;
@group(0) @binding(5) var<storage, read_write> dz: array<vec4<f32>>;

// 16: LayerNorm has one set per row, and one workgroup runs on one thread of a software adapter.
@compute @workgroup_size(16)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let set_index = id.x;
    if set_index >= dims.sets {
        return;
    }
    let n = f32(dims.len);
    let first = set_index * dims.set_stride;
    let base = first / 4u;
    let quads = dims.len / 4u;
    let g0 = dims.gamma_offset + first % dims.width;
    var sum = vec4<f32>(0.0);
    var dot = vec4<f32>(0.0);
    for (var k = 0u; k < quads; k = k + 1u) {
        let g = dout[base + k] * four(g0 + 4u * k);
        sum = sum + g;
        dot = dot + g * xhat[base + k];
    }
    let s = total(sum);
    let d = total(dot);
    let scale = stats[2u * dims.sets + set_index] / n;
    for (var k = 0u; k < quads; k = k + 1u) {
        let g = dout[base + k] * four(g0 + 4u * k);
        dz[base + k] = scale * (n * g - s - xhat[base + k] * d);
    }
}
