// What the norm kernels share (prepended to each one's source, after the activations): vec4
// helpers over the `params` buffer that every one of them binds. Their uniform, `args`, is the
// generated `NormParams` (kernels/mod.rs).

// Four consecutive parameters (scales or shifts of four features).
fn four(offset: u32) -> vec4<f32> {
    return vec4<f32>(params[offset], params[offset + 1u], params[offset + 2u], params[offset + 3u]);
}

// The sum of a vec4's lanes, in a fixed order.
fn total(v: vec4<f32>) -> f32 {
    return (v.x + v.y) + (v.z + v.w);
}
