// Parameter gradients of one linear layer of any shape (linear_parameter_gradient.wgsl takes the
// vec4-aligned ones): dW[o, k] += sum_i dy[i, o] * x[i, k] and db[o] += sum_i dy[i, o].
//
// Four neighbouring invocations take neighbouring inputs (their x loads and gradient stores are
// consecutive addresses, their dy loads the same); each holds 4 outputs x 2 inputs (k, k + 4)
// and adds rows in order onto what `grads` holds, as the CPU does, so accumulating micro-batches
// adds in the same sequence as the full batch. The first invocation of each output block stores
// the bias, summed from the dy every invocation loads anyway.

@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> dy: array<f32>;
@group(0) @binding(3) var<storage, read_write> grads: array<f32>;

fn store_one(o: u32, k: u32, value: f32) {
    if o < args.fan_out && k < args.fan_in {
        grads[args.weight_offset + o * args.fan_in + k] = value;
    }
}

@compute @workgroup_size(16)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    // A group is 4 invocations x 2 inputs each = 8 neighbouring inputs of 4 outputs.
    let groups = (args.fan_in + 7u) / 8u;
    let quad = id.x / 4u;
    let o0 = (quad / groups) * 4u;
    if o0 >= args.fan_out {
        return;
    }
    let k = (quad % groups) * 8u + id.x % 4u;
    // Outputs and inputs past the edge repeat the last one, so that every load is in bounds;
    // their sums are not stored.
    let last_output = args.fan_out - 1u;
    let last_input = args.fan_in - 1u;
    let o = vec4<u32>(o0, min(o0 + 1u, last_output), min(o0 + 2u, last_output), min(o0 + 3u, last_output));
    let ka = min(k, last_input);
    let kb = min(k + 4u, last_input);
    let g = args.weight_offset + o * args.fan_in;
    var sa = vec4<f32>(grads[g.x + ka], grads[g.y + ka], grads[g.z + ka], grads[g.w + ka]);
    var sb = vec4<f32>(grads[g.x + kb], grads[g.y + kb], grads[g.z + kb], grads[g.w + kb]);
    let b = args.bias_offset + o;
    var bias = vec4<f32>(grads[b.x], grads[b.y], grads[b.z], grads[b.w]);
    for (var i = 0u; i < args.rows; i = i + 1u) {
        let xi = args.x_offset + i * args.fan_in;
        let xa = x[xi + ka];
        let xb = x[xi + kb];
        let di = i * args.fan_out;
        let d = vec4<f32>(dy[di + o.x], dy[di + o.y], dy[di + o.z], dy[di + o.w]);
        sa = sa + d * xa;
        sb = sb + d * xb;
        bias = bias + d;
    }
    store_one(o0, k, sa.x);
    store_one(o0 + 1u, k, sa.y);
    store_one(o0 + 2u, k, sa.z);
    store_one(o0 + 3u, k, sa.w);
    store_one(o0, k + 4u, sb.x);
    store_one(o0 + 1u, k + 4u, sb.y);
    store_one(o0 + 2u, k + 4u, sb.z);
    store_one(o0 + 3u, k + 4u, sb.w);
    if k == 0u {
        grads[b.x] = bias.x;
        if o0 + 1u < args.fan_out {
            grads[b.y] = bias.y;
        }
        if o0 + 2u < args.fan_out {
            grads[b.z] = bias.z;
        }
        if o0 + 3u < args.fan_out {
            grads[b.w] = bias.w;
        }
    }
}
