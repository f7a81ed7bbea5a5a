// The backward of a LayerNorm- or GroupNorm-shaped norm layer (sets as in
// norm_forward_within_sets.wgsl) in one dispatch: the first width / 4 invocations add the scale
// and shift gradients, four features each (shared/norm_parameter_gradient_quad.wgsl, as
// norm_backward_params_across_features.wgsl), the rest write the input gradient, one set each,
// four items at a time:
// dz = rstd / n * (n * dxhat - sum(dxhat) - xhat * sum(dxhat * xhat)), dxhat = dout * gamma.
// Both only read dout and xhat and write different buffers, so neither waits for the other.

@group(0) @binding(1) var<storage, read> dout: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> xhat: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> stats: array<f32>;
@group(0) @binding(4) var<storage, read> params: array<f32>;
@group(0) @binding(5) var<storage, read_write> grads: array<f32>;
@group(0) @binding(6) var<storage, read_write> dz: array<vec4<f32>>;

fn input_gradient_set(set_index: u32) {
    if set_index >= args.sets {
        return;
    }
    let n = f32(args.len);
    let first = set_index * args.set_stride;
    let base = first / 4u;
    let quads = args.len / 4u;
    let g0 = args.gamma_offset + first % args.width;
    var sum = vec4<f32>(0.0);
    var dot = vec4<f32>(0.0);
    for (var k = 0u; k < quads; k = k + 1u) {
        let g = dout[base + k] * four(g0 + 4u * k);
        sum = sum + g;
        dot = dot + g * xhat[base + k];
    }
    let s = total(sum);
    let d = total(dot);
    let scale = stats[2u * args.sets + set_index] / n;
    for (var k = 0u; k < quads; k = k + 1u) {
        let g = dout[base + k] * four(g0 + 4u * k);
        dz[base + k] = scale * (n * g - s - xhat[base + k] * d);
    }
}

// 16, as the forward's: as many sets fit a dispatch's workgroups (GroupNorm of 16 groups has 16
// sets per row), and a 64-wide layer's feature quads are one workgroup.
@compute @workgroup_size(16)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let quads = args.width / 4u;
    if id.x < quads {
        // No set crosses a row: the sets' values are rows x width.
        let rows = args.sets * args.len / args.width;
        norm_parameter_gradient_quad(id.x, rows, args.width, args.gamma_offset, args.beta_offset);
    } else {
        input_gradient_set(id.x - quads);
    }
}
