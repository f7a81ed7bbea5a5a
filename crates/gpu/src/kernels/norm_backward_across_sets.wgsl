// The whole backward of a norm layer whose sets are BatchNorm-shaped (see
// norm_forward_across_sets.wgsl) in one dispatch: a set is a feature, so the invocation that
// owns four features' sets also owns their scale and shift gradients. One pass over the rows
// adds each row's dout * xhat and dout into the gradients (rows in order, from the gradients'
// current values, exactly as norm_backward_params_across_features.wgsl) and sums
// dxhat = dout * gamma and dxhat * xhat, each lane in norm_backward_input.wgsl's order; a
// second pass writes dz = rstd / n * (n * dxhat - sum(dxhat) - xhat * sum(dxhat * xhat)).

@group(0) @binding(1) var<storage, read> dout: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> xhat: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> stats: array<f32>;
@group(0) @binding(4) var<storage, read> params: array<f32>;
@group(0) @binding(5) var<storage, read_write> grads: array<f32>;
@group(0) @binding(6) var<storage, read_write> dz: array<vec4<f32>>;

// 4: a 64-wide layer is 16 invocations, and one workgroup runs on one thread of a software adapter.
@compute @workgroup_size(4)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let quad = id.x;
    let first = 4u * quad;
    if first >= args.sets {
        return;
    }
    let n = f32(args.len);
    let stride = args.item_stride / 4u;
    let g = args.gamma_offset + first;
    let b = args.beta_offset + first;
    let gamma = four(g);
    var dgamma = vec4<f32>(grads[g], grads[g + 1u], grads[g + 2u], grads[g + 3u]);
    var dbeta = vec4<f32>(grads[b], grads[b + 1u], grads[b + 2u], grads[b + 3u]);
    var sum = vec4<f32>(0.0);
    var dot = vec4<f32>(0.0);
    for (var k = 0u; k < args.len; k = k + 1u) {
        let e = k * stride + quad;
        let dy = dout[e];
        let x = xhat[e];
        dgamma = dgamma + dy * x;
        dbeta = dbeta + dy;
        let dx = dy * gamma;
        sum = sum + dx;
        dot = dot + dx * x;
    }
    for (var j = 0u; j < 4u; j = j + 1u) {
        grads[g + j] = dgamma[j];
        grads[b + j] = dbeta[j];
    }
    let r = 2u * args.sets + first;
    let scale = vec4<f32>(stats[r], stats[r + 1u], stats[r + 2u], stats[r + 3u]) / n;
    for (var k = 0u; k < args.len; k = k + 1u) {
        let e = k * stride + quad;
        let dx = dout[e] * gamma;
        dz[e] = scale * (n * dx - sum - xhat[e] * dot);
    }
}
