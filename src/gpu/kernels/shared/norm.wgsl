// What the norm kernels share (prepended to each one's source, after the activations): their
// parameters, as `NormParams` in kernels/mod.rs, and vec4 helpers over the `params` buffer that
// every one of them binds.

struct NormParams {
    sets: u32,
    len: u32,
    set_stride: u32,
    item_stride: u32,
    width: u32,
    gamma_offset: u32,
    beta_offset: u32,
    eps: f32,
    activation: u32,
    running_offset: u32,
    momentum: f32,
    update_running: u32,
}

// Four consecutive parameters (scales or shifts of four features).
fn four(offset: u32) -> vec4<f32> {
    return vec4<f32>(params[offset], params[offset + 1u], params[offset + 2u], params[offset + 3u]);
}

// The sum of a vec4's lanes, in a fixed order.
fn total(v: vec4<f32>) -> f32 {
    return (v.x + v.y) + (v.z + v.w);
}
