"""What the analysis knows about the torch API, by qualified name. Data only, no logic."""

from __future__ import annotations

# Tensor factories: results do not require grad unless requires_grad=True is passed.
FACTORIES = frozenset(
    "torch." + n
    for n in (
        "tensor as_tensor asarray zeros ones empty full rand randn randint randperm arange range "
        "linspace logspace eye zeros_like ones_like empty_like full_like rand_like randn_like "
        "randint_like normal bernoulli multinomial poisson tril_indices triu_indices "
        "empty_strided sparse_coo_tensor complex polar "
        "Tensor FloatTensor DoubleTensor HalfTensor LongTensor IntTensor BoolTensor ByteTensor"
    ).split()
)

# Factories whose result carries the grad of a tensor they are given (`torch.as_tensor(y)` is `y`
# itself; `torch.complex(re, im)`, `torch.normal(mean, std)`, `torch.Tensor(y)` compute from it),
# measured on torch 2.13.  (Not `torch.tensor`, the `*_like` functions, `multinomial`: no grad.)
GRAD_THROUGH_FACTORIES = frozenset(
    "torch." + n
    for n in "as_tensor asarray Tensor FloatTensor DoubleTensor HalfTensor complex polar sparse_coo_tensor "
             "normal bernoulli poisson".split()
)

# Values that never require grad and live on the CPU.
FROM_HOST = frozenset({"torch.from_numpy", "torch.frombuffer"})

# torch functions whose result is an integer/bool tensor (never requires grad).
NO_GRAD_FUNCS = frozenset(
    "torch." + n
    for n in (
        "argmax argmin argsort argwhere nonzero eq ne lt le gt ge equal isnan isinf isfinite "
        "isclose logical_and logical_or logical_not logical_xor bucketize searchsorted "
        "count_nonzero bincount histc signbit is_nonzero "
        "randint randperm topk_indices"
    ).split()
)

# torch functions whose one tensor argument is the first (`input`): the others are sizes, shapes,
# dimensions, modes and fill values (`F.pad(x, [0, n - k])`), so what they are does not make the
# result require grad.
FIRST_ARG_ONLY = frozenset(
    (
        "torch.nn.functional.pad torch.nn.functional.interpolate torch.nn.functional.unfold "
        "torch.nn.functional.fold torch.reshape torch.permute torch.tile torch.flatten torch.squeeze "
        "torch.unsqueeze torch.transpose torch.flip torch.roll torch.narrow torch.movedim torch.swapaxes"
    ).split()
)

# torch functions that return a tensor whenever they return (they raise on anything else than
# tensors where one is needed): what they make is a torch tensor even of arguments the analysis
# does not know (`torch.stack([b[0] for b in batch])`), its grad state and device unknown.
# (Not `torch.where`, whose one-argument form returns a tuple.)
TENSOR_FUNCS = frozenset(
    "torch." + n
    for n in (
        "stack cat concat concatenate hstack vstack dstack column_stack abs absolute exp exp2 expm1 log log2 "
        "log10 log1p sqrt rsqrt sigmoid tanh relu softmax log_softmax sin cos tan asin acos atan atan2 sinh cosh "
        "pow mul multiply add sub subtract div divide true_divide floor_divide neg negative reciprocal sign sgn "
        "floor ceil round trunc frac clamp clip clamp_min clamp_max maximum minimum fmax fmin matmul mm bmm mv "
        "dot outer einsum addmm baddbmm sum mean prod cumsum cumprod std var norm logsumexp square erf erfc lerp "
        "flatten reshape squeeze unsqueeze transpose permute flip roll gather index_select masked_select "
        "masked_fill take diag diagonal tril triu cross cdist dist nan_to_num softplus"
    ).split()
)

# torch functions that do not return tensors at all.
NON_TENSOR_FUNCS = frozenset(
    "torch." + n
    for n in (
        "is_tensor is_floating_point is_complex numel manual_seed seed initial_seed "
        "set_grad_enabled is_grad_enabled no_grad enable_grad inference_mode "
        "get_default_dtype set_default_dtype set_printoptions save device dtype "
        "use_deterministic_algorithms set_num_threads get_num_threads compile "
        "finfo iinfo Size Generator get_default_device set_default_device typename "
        "promote_types result_type can_cast get_rng_state set_rng_state"
    ).split()
)

# Tensor methods whose result is not a tensor.
NON_TENSOR_METHODS = frozenset(
    "item tolist numpy size dim ndimension numel nelement element_size data_ptr stride "
    "is_contiguous get_device storage untyped_storage storage_offset is_floating_point "
    "is_complex __len__ __array__ backward register_hook retain_grad".split()
)

# Tensor methods that return an integer/bool tensor or otherwise detach from the graph.
NO_GRAD_METHODS = frozenset(
    "detach long int short char byte bool argmax argmin argsort nonzero eq ne lt le gt ge "
    "isnan isinf isfinite logical_and logical_or logical_not logical_xor signbit "
    "count_nonzero bincount "
    # A sparse tensor's indices (int64, even where its values require grad).
    "indices crow_indices col_indices ccol_indices row_indices".split()
)
# (Not `sign`, `unique`, `unique_consecutive`: their float results require grad, measured on
# torch 2.13.)

# Tensor methods that make a new tensor from data or a size: no grad unless requires_grad=True.
NEW_TENSOR_METHODS = frozenset("new_zeros new_ones new_empty new_full new_tensor".split())

# Tensor methods that neither a tuple nor a dict (nor transformers' ModelOutput, an OrderedDict)
# has, nor a NumPy array (a forward may return one: `.mean()`, `.reshape()`, `.view()` are its
# too), whose result is one tensor: called on a model's output, they give a tensor wherever the
# call works.
TENSOR_ONLY_METHODS = frozenset(
    "detach cpu cuda float double half bfloat16 softmax log_softmax sigmoid tanh relu exp log sqrt norm "
    "view_as unsqueeze permute contiguous clone".split()
)
# torch.nn.functional's functions that return one tensor (torch's own: TENSOR_FUNCS).
FUNCTIONAL_TENSOR_FUNCS = frozenset(
    "torch.nn.functional." + n
    for n in "softmax log_softmax sigmoid tanh relu gelu silu normalize".split()
)

# torch.autograd.grad returns gradients that do not require grad (unless create_graph=True).
AUTOGRAD_GRAD = frozenset({"torch.autograd.grad"})

# Functions/methods returning a (values, indices) pair; the indices never require grad.
VALUES_INDICES = frozenset("sort topk kthvalue mode cummax cummin".split())
# The same, only when a dimension is given: torch.max(x) is a tensor, torch.max(x, 1) a pair.
VALUES_INDICES_WITH_DIM = frozenset("max min median nanmedian".split())

# Tensor attributes that are not tensors.
NON_TENSOR_ATTRS = frozenset(
    "shape dtype device ndim requires_grad is_leaf is_cuda is_sparse is_quantized is_meta "
    "layout names grad_fn itemsize nbytes".split()
)

# Attributes that give the same tensor (a view or a transposition) with the same autograd state.
SAME_TENSOR_ATTRS = frozenset("T mT H mH real imag".split())

# torch.nn classes whose forward saves its result for backward (measured on torch 2.13, CPU:
# write through `.detach()` to what the module returned, then call `backward()`: it raises), as
# their functions do (saved.SAVES_RESULT); `nn.ReLU(inplace=True)` too.  What did not raise there:
# GELU, ELU, SELU, CELU, SiLU, LeakyReLU, ReLU6, Hardtanh, Hardsigmoid, Softplus, LogSigmoid,
# Tanhshrink, Threshold, Identity, Dropout.  A module made of one, or an `nn.Sequential` that ends in
# one, carries this tag (saved.saved_tensors).
RESULT_SAVING_MODULES = frozenset("torch.nn." + n for n in "Sigmoid Tanh ReLU Softmax LogSoftmax Softmin".split())
RESULT_SAVING_TAG = "saves_result"

# torch.nn classes without parameters: calling one gives a result that requires grad only
# when an input does.
PARAMFREE_MODULES = frozenset(
    "torch.nn." + n
    for n in (
        "ReLU ReLU6 LeakyReLU ELU SELU CELU GELU SiLU Mish Sigmoid Tanh Hardtanh Hardswish "
        "Hardsigmoid Softplus Softsign Softmax LogSoftmax Softmin Tanhshrink Threshold "
        "Identity Flatten Unflatten Dropout Dropout1d Dropout2d Dropout3d AlphaDropout "
        "MaxPool1d MaxPool2d MaxPool3d AvgPool1d AvgPool2d AvgPool3d AdaptiveAvgPool1d "
        "AdaptiveAvgPool2d AdaptiveAvgPool3d AdaptiveMaxPool1d AdaptiveMaxPool2d "
        "AdaptiveMaxPool3d Upsample UpsamplingNearest2d UpsamplingBilinear2d PixelShuffle "
        "PixelUnshuffle ZeroPad2d ConstantPad1d ConstantPad2d ReflectionPad2d "
        "ReplicationPad2d CosineSimilarity PairwiseDistance "
        "L1Loss MSELoss CrossEntropyLoss NLLLoss BCELoss BCEWithLogitsLoss KLDivLoss "
        "HuberLoss SmoothL1Loss SoftMarginLoss MultiLabelSoftMarginLoss CosineEmbeddingLoss "
        "MarginRankingLoss HingeEmbeddingLoss TripletMarginLoss CTCLoss PoissonNLLLoss "
        "GaussianNLLLoss MultiMarginLoss MultiLabelMarginLoss"
    ).split()
)

# Attribute names that are parameters when read off a module.
PARAM_ATTRS = frozenset(
    "weight bias in_proj_weight in_proj_bias out_proj_weight q_proj_weight k_proj_weight "
    "v_proj_weight bias_k bias_v weight_ih_l0 weight_hh_l0 bias_ih_l0 bias_hh_l0".split()
)

# Module methods that return the module itself.
MODULE_SELF_METHODS = frozenset(
    "to cuda cpu train eval float double half bfloat16 requires_grad_ apply share_memory "
    "type xpu mps".split()
)

# Calling x.<name>() on a name is evidence that x is an nn.Module.
MODULE_EVIDENCE_METHODS = frozenset(
    "parameters named_parameters modules named_modules children named_children train eval".split()
)

# Grad-mode context managers and decorators.
NO_GRAD = frozenset(
    {
        "torch.no_grad",
        "torch.autograd.no_grad",
        "torch.autograd.grad_mode.no_grad",
        "torch.inference_mode",
        "torch.autograd.inference_mode",
        "torch.autograd.grad_mode.inference_mode",
    }
)
ENABLE_GRAD = frozenset({"torch.enable_grad", "torch.autograd.enable_grad", "torch.autograd.grad_mode.enable_grad"})
SET_GRAD_ENABLED = frozenset(
    {"torch.set_grad_enabled", "torch.autograd.set_grad_enabled", "torch.autograd.grad_mode.set_grad_enabled"}
)

DATALOADERS = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})

PARAMETER = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter"})

# Module buffers (`nn.Buffer(t)`, `self.register_buffer(name, t)`): tensors that do not require
# grad and move with their module.
BUFFER = frozenset({"torch.nn.Buffer", "torch.nn.parameter.Buffer"})

# Packages whose calls return modules (model constructors).
MODEL_FACTORY_PREFIXES = ("torchvision.models.", "timm.create_model")

# Calls that wrap a module (or a function) and keep its parameters: what they return requires
# grad where the wrapped module's parameters do (`nn.DataParallel(frozen)` does not).
MODULE_WRAPPERS = frozenset({
    "torch.nn.DataParallel", "torch.nn.parallel.DataParallel", "torch.nn.parallel.data_parallel.DataParallel",
    "torch.nn.parallel.DistributedDataParallel", "torch.nn.parallel.distributed.DistributedDataParallel",
    "torch.compile", "torch.jit.script", "torch.jit.trace",
    # (A deep copy of the module, its parameters as the module's: an EMA or SWA model.)
    "torch.optim.swa_utils.AveragedModel",
})

# `nn.Embedding.from_pretrained(weights, freeze=True)`: a module whose weight is frozen unless
# `freeze` (the second parameter) is false.
FROM_PRETRAINED_FROZEN = frozenset({"torch.nn.Embedding.from_pretrained", "torch.nn.EmbeddingBag.from_pretrained"})

# `parameters_to_vector(params)`: one tensor of the parameters it is given (`torch.cat` of their
# views), which requires grad where they do.
PARAMETERS_TO_VECTOR = frozenset({"torch.nn.utils.parameters_to_vector",
                                  "torch.nn.utils.convert_parameters.parameters_to_vector"})

# Top-level packages of other frameworks: what their calls return is not a torch tensor (some
# have `.numpy()`, `.clone()` or `.detach()` of their own, with other semantics).
FOREIGN_FRAMEWORKS = frozenset(
    "tensorflow keras tf_keras jax jaxlib flax optax paddle mxnet mindspore oneflow cupy pandas "
    "polars scipy sklearn PIL cv2 xarray dask tensorrt onnxruntime".split()
)

# Base classes of torch modules outside torch.nn, by qualified name prefix.
MODULE_BASE_PACKAGES = ("pytorch_lightning.", "lightning.", "transformers.")

# Matplotlib's plotting functions, pyplot's and the same methods of an Axes, which convert each
# data argument with NumPy (`np.asarray`, through `Tensor.__array__`: `Tensor.numpy()`) when they
# are called (TNS106; what TNS503 takes for a display).
PLOTTERS = frozenset((
    "plot scatter bar barh semilogy semilogx loglog fill_between fill_betweenx fill errorbar step stem stackplot "
    "imshow matshow pcolormesh pcolor contour contourf spy hist boxplot violinplot pie stairs ecdf hist2d hexbin"
).split())
