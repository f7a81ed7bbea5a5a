// The parallel half of the gradient's reduction (as reduce_partials.wgsl, mode 1 or 2) and the
// optimizer step (as optimizer.wgsl) in one pass over the gradient: invocation t of 256 adds
// the terms of elements t, t + 256, ... to partials[t] and updates those parameters. The
// reduction reads the gradient, which the update does not change, so the two need no order; a
// software adapter pays per dispatch and per workgroup, and the optimizer alone took 73
// workgroups for the canonical network. reduce_serial.wgsl then adds the partials.

@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> b: array<f32>;
@group(0) @binding(3) var<storage, read_write> partials: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> params: array<f32>;
@group(0) @binding(5) var<storage, read_write> first: array<f32>;
@group(0) @binding(6) var<storage, read_write> second: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let t = id.x;
    if t >= 256u {
        return;
    }
    let settings = OptimizerSettings(
        args.kind,
        args.learning_rate,
        args.weight_decay,
        args.beta1,
        args.beta2,
        args.eps,
        args.momentum,
        args.correction1,
        args.correction2,
    );
    var acc = vec4<f32>(0.0);
    for (var i = t; i < args.len; i = i + 256u) {
        let x = a[i];
        acc = acc + reduce_terms(args.mode, x, i);
        update_parameter(i, x, settings);
    }
    partials[t] = acc;
}
