// The parallel half of a reduction into scalar slots, `mode` as `ReduceMode`: 256 invocations,
// invocation t summing the terms (shared/reduce_terms.wgsl) of elements t, t + 256, t + 512, ...
// into partials[t]. reduce_serial.wgsl then adds the 256 partials in a fixed tree. There are no
// barriers: a software adapter runs a workgroup with barriers as one coroutine per four
// invocations, which cost it far more than the sums (measured: ~0.5 ms per reduction on
// SwiftShader).

@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> b: array<f32>;
@group(0) @binding(3) var<storage, read_write> partials: array<vec4<f32>>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let t = id.x;
    if t >= 256u {
        return;
    }
    var acc = vec4<f32>(0.0);
    for (var i = t; i < args.len; i = i + 256u) {
        acc = acc + reduce_terms(args.mode, a[i], i);
    }
    partials[t] = acc;
}
