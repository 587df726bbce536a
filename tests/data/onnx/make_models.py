#!/usr/bin/env python3
"""Writes the small ONNX graphs the ONNX import tests use (shapes only: every
weight is an initializer that names its dimensions and points at external
data that is not there, as ../shared/onnx's models do). Run with Debian's
python3-onnx; the .onnx files are committed, so the tests need no Python.

  transformer_block.onnx  one encoder block (batch 2, 128 tokens, 4 heads of 64):
                          Q, K, V and output projections, Q.K^T and .V per head,
                          a two-layer FFN; shapes stored
  mobilenet_v2.onnx       MobileNet-v2 (1.0, 224): 52 convolutions, 17 of them
                          depthwise, one fully connected layer; shapes stored
  mobilenet_v2_no_shapes.onnx  the same without its intermediate shapes
  dynamic_no_shapes.onnx  a small CNN whose batch is dynamic ("N") and which
                          stores no intermediate shapes (shape inference needed)
  conv_kinds.onnx         Conv1D, Conv3D, dilated and strided 2-D convolutions, a
                          ConvTranspose, Reshape then MatMul as a fully connected layer
  activations_only.onnx   Relu and Softmax, no layer Mapwright models
"""
import os
import onnx
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))


def weight(name, dims):
    t = TensorProto()
    t.name = name
    t.data_type = TensorProto.FLOAT
    t.dims.extend(dims)
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", "weights.bin"), ("offset", "0"), ("length", str(4 * prod(dims)))):
        e = t.external_data.add()
        e.key, e.value = k, v
    return t


def scope(path, op):
    """PyTorch's exported node name for module `path`: a numbered child takes its
    parent's name as a prefix ("layer1.0"), so features.1.conv.0 becomes
    /features/features.1/conv/conv.0/OP."""
    parts, out = path.split("."), []
    for i, p in enumerate(parts):
        if p.isdigit() and out:
            out.append(out[-1] + "." + p)
        else:
            out.append(p)
    return "/" + "/".join(out) + "/" + op


def prod(dims):
    p = 1
    for d in dims:
        p *= d
    return p


def model(nodes, inputs, outputs, inits, name, infer=True, opset=13):
    graph = helper.make_graph(nodes, name, inputs, outputs, inits)
    m = helper.make_model(graph, producer_name="mapwright-tests",
                          opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 7
    if infer:
        m = onnx.shape_inference.infer_shapes(m)
    return m


def transformer():
    b, s, h, heads = 2, 128, 256, 4
    d = h // heads
    nodes, inits = [], []
    x = helper.make_tensor_value_info("tokens", TensorProto.FLOAT, [b, s, h])

    def linear(inp, prefix, n_in, n_out):
        inits.append(weight(prefix + ".weight", [n_in, n_out]))
        out = scope(prefix, "MatMul_output_0")
        nodes.append(helper.make_node("MatMul", [inp, prefix + ".weight"], [out],
                                      name=scope(prefix, "MatMul")))
        return out

    def heads_view(inp, prefix, perm):
        shape = prefix + "_shape"
        inits.append(helper.make_tensor(shape, TensorProto.INT64, [4], [b, s, heads, d]))
        nodes.append(helper.make_node("Reshape", [inp, shape], [prefix + "_r"], name="/" + prefix + "/Reshape"))
        nodes.append(helper.make_node("Transpose", [prefix + "_r"], [prefix + "_t"], perm=perm,
                                      name="/" + prefix + "/Transpose"))
        return prefix + "_t"

    q = heads_view(linear("tokens", "encoder.layer.0.attention.query", h, h), "q", [0, 2, 1, 3])
    k = heads_view(linear("tokens", "encoder.layer.0.attention.key", h, h), "k", [0, 2, 3, 1])
    v = heads_view(linear("tokens", "encoder.layer.0.attention.value", h, h), "v", [0, 2, 1, 3])
    nodes.append(helper.make_node("MatMul", [q, k], ["scores"], name=scope("encoder.layer.0.attention", "MatMul")))
    nodes.append(helper.make_node("Softmax", ["scores"], ["probs"], axis=-1,
                                  name="/encoder/layer.0/attention/Softmax"))
    nodes.append(helper.make_node("MatMul", ["probs", v], ["context"], name=scope("encoder.layer.0.attention", "MatMul_1")))
    nodes.append(helper.make_node("Transpose", ["context"], ["context_t"], perm=[0, 2, 1, 3],
                                  name="/encoder/layer.0/attention/Transpose"))
    inits.append(helper.make_tensor("merge_shape", TensorProto.INT64, [3], [b, s, h]))
    nodes.append(helper.make_node("Reshape", ["context_t", "merge_shape"], ["merged"],
                                  name="/encoder/layer.0/attention/Reshape"))
    out = linear("merged", "encoder.layer.0.attention.output", h, h)
    nodes.append(helper.make_node("Add", [out, "tokens"], ["res1"], name="/encoder/layer.0/Add"))
    ff = linear("res1", "encoder.layer.0.ffn.fc1", h, 4 * h)
    nodes.append(helper.make_node("Relu", [ff], ["ff_relu"], name="/encoder/layer.0/ffn/Relu"))
    ff2 = linear("ff_relu", "encoder.layer.0.ffn.fc2", 4 * h, h)
    nodes.append(helper.make_node("Add", [ff2, "res1"], ["block_out"], name="/encoder/layer.0/Add_1"))
    y = helper.make_tensor_value_info("block_out", TensorProto.FLOAT, [b, s, h])
    return model(nodes, [x], [y], inits, "transformer_block")


def mobilenet_v2(infer=True):
    nodes, inits = [], []
    state = {"n": 0}

    def conv(inp, cin, cout, k, stride, group, name):
        w = name + ".weight"
        inits.append(weight(w, [cout, cin // group, k, k]))
        out = scope(name, "Conv_output_0")
        nodes.append(helper.make_node("Conv", [inp, w], [out], name=scope(name, "Conv"),
                                      kernel_shape=[k, k], strides=[stride, stride],
                                      pads=[k // 2] * 4, group=group))
        relu = scope(name, "Relu_output_0")
        nodes.append(helper.make_node("Relu", [out], [relu], name=scope(name, "Relu")))
        return relu

    x = helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 224, 224])
    t = conv("input", 3, 32, 3, 2, 1, "features.0.0")
    cin = 32
    settings = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
                (6, 160, 3, 2), (6, 320, 1, 1)]
    block = 1
    for expand, cout, repeat, stride in settings:
        for i in range(repeat):
            s = stride if i == 0 else 1
            hidden = cin * expand
            prefix = "features.%d.conv" % block
            inp = t
            if expand != 1:
                t = conv(t, cin, hidden, 1, 1, 1, prefix + ".0.0")
                t = conv(t, hidden, hidden, 3, s, hidden, prefix + ".1.0")
                t = conv(t, hidden, cout, 1, 1, 1, prefix + ".2")
            else:
                t = conv(t, cin, hidden, 3, s, hidden, prefix + ".0.0")
                t = conv(t, hidden, cout, 1, 1, 1, prefix + ".1")
            if s == 1 and cin == cout:
                add = scope("features.%d" % block, "Add_output_0")
                nodes.append(helper.make_node("Add", [t, inp], [add], name=scope("features.%d" % block, "Add")))
                t = add
            cin = cout
            block += 1
    t = conv(t, cin, 1280, 1, 1, 1, "features.18.0")
    nodes.append(helper.make_node("GlobalAveragePool", [t], ["pooled"], name="/GlobalAveragePool"))
    nodes.append(helper.make_node("Flatten", ["pooled"], ["flat"], name="/Flatten", axis=1))
    inits.append(weight("classifier.1.weight", [1000, 1280]))
    nodes.append(helper.make_node("Gemm", ["flat", "classifier.1.weight"], ["logits"],
                                  name="/classifier/classifier.1/Gemm", transB=1))
    y = helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 1000])
    return model(nodes, [x], [y], inits, "mobilenet_v2", infer=infer)


def dynamic_no_shapes():
    nodes, inits = [], []
    x = helper.make_tensor_value_info("image", TensorProto.FLOAT, ["N", 3, 32, 32])
    inits.append(weight("c1.w", [16, 3, 3, 3]))
    nodes.append(helper.make_node("Conv", ["image", "c1.w"], ["a"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]))
    nodes.append(helper.make_node("Relu", ["a"], ["b"]))
    inits.append(weight("c2.w", [32, 16, 3, 3]))
    nodes.append(helper.make_node("Conv", ["b", "c2.w"], ["c"], kernel_shape=[3, 3], strides=[2, 2],
                                  pads=[1, 1, 1, 1]))
    nodes.append(helper.make_node("Flatten", ["c"], ["f"], axis=1))
    inits.append(weight("fc.w", [10, 32 * 16 * 16]))
    nodes.append(helper.make_node("Gemm", ["f", "fc.w"], ["logits"], transB=1))
    y = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 10])
    return model(nodes, [x], [y], inits, "dynamic_cnn", infer=False)


def conv_kinds():
    nodes, inits = [], []
    a = helper.make_tensor_value_info("signal", TensorProto.FLOAT, [1, 8, 100])
    inits.append(weight("conv1d.weight", [16, 8, 5]))
    nodes.append(helper.make_node("Conv", ["signal", "conv1d.weight"], ["s1"], name="/conv1d/Conv",
                                  kernel_shape=[5], strides=[2], pads=[2, 2]))
    v = helper.make_tensor_value_info("volume", TensorProto.FLOAT, [1, 4, 16, 32, 32])
    inits.append(weight("conv3d.weight", [8, 4, 3, 3, 3]))
    nodes.append(helper.make_node("Conv", ["volume", "conv3d.weight"], ["v1"], name="/conv3d/Conv",
                                  kernel_shape=[3, 3, 3], pads=[1] * 6))
    i = helper.make_tensor_value_info("picture", TensorProto.FLOAT, [2, 16, 28, 28])
    inits.append(weight("dilated.weight", [32, 16, 3, 3]))
    nodes.append(helper.make_node("Conv", ["picture", "dilated.weight"], ["p1"], name="/dilated/Conv",
                                  kernel_shape=[3, 3], dilations=[2, 2], pads=[2, 2, 2, 2]))
    inits.append(weight("strided.weight", [64, 32, 3, 3]))
    nodes.append(helper.make_node("Conv", ["p1", "strided.weight"], ["p2"], name="/strided/Conv",
                                  kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]))
    inits.append(weight("up.weight", [64, 16, 4, 4]))  # ConvTranspose: [C_in, C_out/group, kH, kW]
    nodes.append(helper.make_node("ConvTranspose", ["p2", "up.weight"], ["p3"], name="/up/ConvTranspose",
                                  kernel_shape=[4, 4], strides=[2, 2], pads=[1, 1, 1, 1]))
    inits.append(helper.make_tensor("flat_shape", TensorProto.INT64, [2], [2, 16 * 28 * 28]))
    nodes.append(helper.make_node("Reshape", ["p3", "flat_shape"], ["flat"], name="/Reshape"))
    inits.append(weight("head.weight", [16 * 28 * 28, 10]))
    nodes.append(helper.make_node("MatMul", ["flat", "head.weight"], ["logits"], name="/head/MatMul"))
    outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("s1", "v1", "logits")]
    return model(nodes, [a, v, i], outs, inits, "conv_kinds")


def activations_only():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 10])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="/relu/Relu"),
             helper.make_node("Softmax", ["r"], ["y"], name="/softmax/Softmax", axis=-1)]
    return model(nodes, [x], [y], [], "activations_only")


if __name__ == "__main__":
    for name, m in (("activations_only", activations_only()), ("transformer_block", transformer()), ("mobilenet_v2", mobilenet_v2()),
                    ("mobilenet_v2_no_shapes", mobilenet_v2(infer=False)),
                    ("dynamic_no_shapes", dynamic_no_shapes()), ("conv_kinds", conv_kinds())):
        path = os.path.join(HERE, name + ".onnx")
        with open(path, "wb") as f:
            f.write(m.SerializeToString())
        print(path, os.path.getsize(path), "bytes")
