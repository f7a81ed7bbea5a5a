// The last dispatch of one micro-batch's backward and the first of the next micro-batch's
// forward in one: the first invocations add the output layer's and the first layer's parameter
// gradients (as first_and_output_parameter_gradients.wgsl), the rest compute the first layer's
// forward of the next micro-batch (as linear_forward_vec4_out.wgsl: the same layer, its rows
// from forward_x_offset). The forward reads the data and the parameters and writes the first
// layer's z and a, which the gradients do not read (the engine fuses only where the top hidden
// layer is not the first, whose activations the output layer's gradients read); the gradients
// add into `grads`, which the forward does not read. Every value is its kernel's, bit for bit.

@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> dy: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> grads: array<f32>;
@group(0) @binding(4) var<storage, read> a_top: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read> dlogits: array<f32>;
@group(0) @binding(6) var<storage, read> params: array<f32>;
@group(0) @binding(7) var<storage, read_write> z: array<vec4<f32>>;
@group(0) @binding(8) var<storage, read_write> a: array<vec4<f32>>;

@compute @workgroup_size(8)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let output_jobs = output_parameter_gradient_jobs();
    let gradient_jobs = output_jobs + parameter_gradient_vec4_out_jobs();
    if id.x < output_jobs {
        output_parameter_gradient_block(id.x);
    } else if id.x < gradient_jobs {
        parameter_gradient_vec4_out_block(id.x - output_jobs);
    } else {
        forward_vec4_out_block(id.x - gradient_jobs, args.forward_rows, args.forward_x_offset);
    }
}
