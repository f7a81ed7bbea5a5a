// The scale and shift gradients of four features, shared by
// norm_backward_params_across_features.wgsl and norm_backward_within_sets.wgsl: features
// 4 quad .. 4 quad + 3 as the lanes of a vec4, each lane adding its rows in order exactly as
// norm_backward_params.wgsl does (the order that keeps accumulation bit-identical). Reads `dout`
// and `xhat` (array<vec4<f32>>) and adds into `grads` (array<f32>), bindings the kernel that
// includes it declares.

fn norm_parameter_gradient_quad(quad: u32, rows: u32, width: u32, gamma_offset: u32, beta_offset: u32) {
    let first = 4u * quad;
    if first >= width {
        return;
    }
    let quads = width / 4u;
    let g = gamma_offset + first;
    let b = beta_offset + first;
    var dgamma = vec4<f32>(grads[g], grads[g + 1u], grads[g + 2u], grads[g + 3u]);
    var dbeta = vec4<f32>(grads[b], grads[b + 1u], grads[b + 2u], grads[b + 3u]);
    for (var i = 0u; i < rows; i = i + 1u) {
        let e = i * quads + quad;
        dgamma = dgamma + dout[e] * xhat[e];
        dbeta = dbeta + dout[e];
    }
    for (var j = 0u; j < 4u; j = j + 1u) {
        grads[g + j] = dgamma[j];
        grads[b + j] = dbeta[j];
    }
}
