"""Shared export helpers for the model zoo: realistic random init, ONNX/TorchScript export, manifest."""
import importlib.metadata
import json
import pathlib

import torch

from zoo_files import sha256

ONNX_OPSET = 17


def realistic_init(model: torch.nn.Module, seed: int) -> None:
    """Give batch-norm and layer-norm layers and biases distinct, plausible values.

    torchvision initialises BN to weight=1, bias=0, mean=0, var=1 in every layer (transformers
    does the same for LayerNorm and zeroes biases); the exporter then folds identical constants
    into shared initializers behind Identity nodes.
    """
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, torch.nn.modules.batchnorm._BatchNorm):
                n = module.num_features
                module.weight.copy_(torch.rand(n, generator=generator) * 0.5 + 0.75)
                module.bias.copy_(torch.randn(n, generator=generator) * 0.05)
                module.running_mean.copy_(torch.randn(n, generator=generator) * 0.05)
                module.running_var.copy_(torch.rand(n, generator=generator) * 0.5 + 0.75)
            elif isinstance(module, torch.nn.LayerNorm) and module.elementwise_affine:
                module.weight.copy_(1.0 + torch.randn(module.weight.shape, generator=generator) * 0.05)
                module.bias.copy_(torch.randn(module.bias.shape, generator=generator) * 0.02)
            elif isinstance(module, (torch.nn.Linear, torch.nn.Conv2d)) and module.bias is not None:
                module.bias.copy_(torch.randn(module.bias.shape, generator=generator) * 0.02)


def count_gflops(model: torch.nn.Module, example: torch.Tensor) -> float:
    """Floating-point operations of one forward pass at batch 1, in GFLOP: 2 x multiply-adds of
    every convolution and linear layer (the layers that dominate; element-wise ops are left out)."""
    total = 0

    def conv_hook(module, inputs, output):
        nonlocal total
        kernel_macs = module.in_channels // module.groups * module.kernel_size[0] * module.kernel_size[1]
        total += 2 * kernel_macs * output.numel() // output.shape[0]

    def linear_hook(module, inputs, output):
        nonlocal total
        total += 2 * module.in_features * module.out_features

    hooks = [m.register_forward_hook(conv_hook) for m in model.modules() if isinstance(m, torch.nn.Conv2d)]
    hooks += [m.register_forward_hook(linear_hook) for m in model.modules() if isinstance(m, torch.nn.Linear)]
    with torch.no_grad():
        model(example[:1])
    for h in hooks:
        h.remove()
    return total / 1e9


def _dynamic_axes(specs):
    """Map every named (string) dimension of each tensor spec to an ONNX dynamic axis."""
    return {spec[0]: {i: d for i, d in enumerate(spec[2]) if isinstance(d, str)} for spec in specs}


def export_onnx(model, example, path: pathlib.Path, inputs, outputs, opset: int = ONNX_OPSET) -> pathlib.Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.onnx.export(model, example, str(path), opset_version=opset,
                      input_names=[spec[0] for spec in inputs], output_names=[spec[0] for spec in outputs],
                      dynamic_axes={**_dynamic_axes(inputs), **_dynamic_axes(outputs)},
                      do_constant_folding=True)
    return path


def export_torchscript(model, example, path: pathlib.Path) -> pathlib.Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with torch.no_grad():
        traced = torch.jit.trace(model, example)
    traced.save(str(path))
    return path


def _io_specs(entries, dim_ranges=None):
    # An optional fourth element is the [low, high) value range of an integer input (token ids).
    # `dim_ranges` gives each named (dynamic) dimension its [min, max] extent.
    specs = []
    for e in entries:
        spec = {"name": e[0], "dtype": e[1], "shape": e[2], **({"value_range": list(e[3])} if len(e) > 3 else {})}
        named = {d: list(dim_ranges[d]) for d in e[2] if isinstance(d, str) and dim_ranges and d in dim_ranges}
        if named:
            spec["dynamic_axes"] = named
        specs.append(spec)
    return specs


def file_entry(path: pathlib.Path) -> dict:
    """Path, size and checksum of a model file; an OpenVINO IR's .xml carries its .bin along (as an
    ncnn .ncnn.param its .ncnn.bin), and a
    model folder (ONNX Runtime GenAI's *.genai) lists every file in it with its own checksum."""
    if path.is_dir():
        members = [{"path": f"{path.name}/{f.name}", "size": f.stat().st_size, "sha256": sha256(f)}
                   for f in sorted(path.iterdir()) if f.is_file()]
        return {"path": path.name, "size": sum(m["size"] for m in members), "members": members}
    entry = {"path": path.name, "size": path.stat().st_size, "sha256": sha256(path)}
    if path.suffix == ".xml":
        entry["weights"] = file_entry(path.with_suffix(".bin"))
    if path.name.endswith(".ncnn.param"):  # pnnx's pair: <stem>.ncnn.param and <stem>.ncnn.bin
        entry["weights"] = file_entry(path.with_name(path.name[: -len(".param")] + ".bin"))
    return entry


def _manifest(*, name, task, weights, producer, files, inputs, outputs, dim_ranges=None) -> dict:
    """The fields every manifest has; `producer` names the tool versions that wrote the files."""
    return {"name": name, "task": task, "weights": weights, **producer,
            "files": {fmt: file_entry(p) for fmt, p in files.items()},
            "inputs": _io_specs(inputs, dim_ranges), "outputs": _io_specs(outputs, dim_ranges)}


# What an output holds, so the harness judges agreement by the right measure (src/core/output_kind.hpp):
# class scores (top-1), per-step class scores ([batch, steps, classes]: per-step top-1), an embedding
# (cosine per vector), or other (cosine of the whole tensor).
OUTPUT_KINDS = ("class_scores", "sequence_class_scores", "embedding", "other")


def write_manifest(path: pathlib.Path, *, name, task, files, inputs, outputs, weights, gflops=None,
                   dim_ranges=None, extra=None, output_kinds=None) -> None:
    """One JSON manifest per model: what it is, its files with checksums, and its I/O specs.
    `extra` adds fields (precision, family, accuracy) the zoo's build writes; `output_kinds` maps
    output names to one of OUTPUT_KINDS (the output spec's "kind")."""
    manifest = _manifest(name=name, task=task, weights=weights, files=files, inputs=inputs, outputs=outputs,
                         producer={"torch_version": torch.__version__, "onnx_opset": ONNX_OPSET},
                         dim_ranges=dim_ranges)
    for spec in manifest["outputs"]:
        kind = (output_kinds or {}).get(spec["name"])
        if kind is not None:
            assert kind in OUTPUT_KINDS, f"{name}: output {spec['name']}: kind {kind!r} is not one of {OUTPUT_KINDS}"
            spec["kind"] = kind
    if gflops is not None:
        manifest["gflops_per_inference"] = round(gflops, 4)  # batch 1; conv + linear layers, 2 FLOPs per MAC
    manifest.update(extra or {})
    path.write_text(json.dumps(manifest, indent=2) + "\n")


def write_gguf_manifest(path: pathlib.Path, *, name, task, files, inputs, outputs, weights, architecture,
                        accuracy=None) -> None:
    """write_manifest's layout for a GGUF model (llama.cpp), which neither torch nor ONNX produced:
    no torch_version or onnx_opset, but the gguf package's version and the architecture numbers."""
    import gguf  # only the GGUF exporters need it

    manifest = _manifest(name=name, task=task, weights=weights, files=files, inputs=inputs, outputs=outputs,
                         producer={"gguf_python_version": importlib.metadata.version("gguf"),
                                   "gguf_format_version": gguf.GGUF_VERSION})
    manifest["architecture"] = architecture
    if accuracy:
        manifest["accuracy"] = accuracy
    path.write_text(json.dumps(manifest, indent=2) + "\n")
