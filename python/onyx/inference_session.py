"""InferenceSession, NodeArg and ModelMetadata with ONNX Runtime's behaviour: provider lists and
their fallback to CPU, input checks, run / run_with_ort_values / run_with_iobinding / run_async,
profiling. The work happens in onyx._C.Session (C++), with the GIL released while it runs."""
import collections.abc
import os
import threading
import warnings

from onyx import _C
from onyx.ortvalue import IOBinding, OrtValue
from onyx.providers import get_all_providers, get_available_providers
from onyx.session_options import SessionOptions


class NodeArg:
    """A model input or output: name, type ('tensor(float)') and shape (ints, dim names, None)."""

    __slots__ = ("name", "type", "shape")

    def __init__(self, name, type, shape):  # noqa: A002 - ORT's field name
        self.name, self.type, self.shape = name, type, shape

    def __str__(self):
        return f"NodeArg(name='{self.name}', type='{self.type}', shape={self.shape})"

    __repr__ = __str__


class ModelMetadata:
    """The model's producer, graph name, domain, description, version and custom metadata."""

    def __init__(self, fields):
        self.producer_name = fields["producer_name"]
        self.graph_name = fields["graph_name"]
        self.domain = fields["domain"]
        self.description = fields["description"]
        self.version = fields["version"]
        self.custom_metadata_map = dict(fields["custom_metadata_map"])
        self.graph_description = fields.get("graph_description", "")


def normalize_providers(providers, provider_options, available):
    """ONNX Runtime's check_and_normalize_provider_args: (names, options dicts), with its warnings."""
    if providers is None:
        return [], []
    chosen = {}

    def add(name, options):
        if name not in available:
            warnings.warn(
                "Specified provider '{}' is not in available provider names.Available providers: '{}'".format(
                    name, ", ".join(available)))
        if name in chosen:
            warnings.warn(f"Duplicate provider '{name}' encountered, ignoring.")
            return
        chosen[name] = {str(k): str(v) for k, v in options.items()}

    if not isinstance(providers, collections.abc.Sequence):
        raise ValueError("'providers' should be a sequence.")
    if provider_options is not None:
        if not isinstance(provider_options, collections.abc.Sequence):
            raise ValueError("'provider_options' should be a sequence.")
        if len(providers) != len(provider_options):
            raise ValueError("'providers' and 'provider_options' should be the same length if both are given.")
        if not all(isinstance(p, str) for p in providers):
            raise ValueError("Only string values for 'providers' are supported if 'provider_options' is given.")
        if not all(isinstance(o, dict) for o in provider_options):
            raise ValueError("'provider_options' values must be dicts.")
        for name, options in zip(providers, provider_options):
            add(name, options)
    else:
        for p in providers:
            if isinstance(p, str):
                add(p, {})
            elif isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], str) and isinstance(p[1], dict):
                add(p[0], p[1])
            else:
                raise ValueError("'providers' values must be either strings or (string, dict) tuples.")
    return list(chosen), list(chosen.values())


class InferenceSession:
    """ONNX Runtime's InferenceSession over onyx::Session."""

    def __init__(self, path_or_bytes, sess_options=None, providers=None, provider_options=None, **kwargs):
        self._enable_fallback = int(kwargs.get("enable_fallback", 1)) == 1
        if isinstance(path_or_bytes, (str, os.PathLike)):
            self._model = os.fspath(path_or_bytes)
        elif isinstance(path_or_bytes, bytes):
            self._model = path_or_bytes
        else:
            raise TypeError(f"Unable to load from type '{type(path_or_bytes)}'")
        if sess_options is not None and not isinstance(sess_options, SessionOptions):
            raise TypeError(f"sess_options must be an onyx.SessionOptions, got {type(sess_options).__name__}")
        self._sess_options = sess_options if sess_options is not None else SessionOptions()
        self._fallback_providers = ["CPUExecutionProvider"]
        if kwargs.get("disabled_optimizers"):
            self._disabled_optimizers = ",".join(sorted(kwargs["disabled_optimizers"]))
        else:
            self._disabled_optimizers = None
        try:
            self._create(providers, provider_options)
        except (ValueError, RuntimeError) as e:
            if not self._enable_fallback:
                raise
            print("*************** EP Error ***************")
            print(f"EP Error {e} when using {providers}")
            print(f"Falling back to {self._fallback_providers} and retrying.")
            print("****************************************")
            self._create(self._fallback_providers, None)
            self.disable_fallback()

    def _create(self, providers, provider_options):
        available = get_available_providers()
        if providers is None and self._sess_options.has_providers():
            providers = list(self._sess_options._providers)
        names, options = normalize_providers(providers, provider_options, available)
        use = []
        for name in names:
            if name in available:
                use.append(name)
            elif name not in get_all_providers():
                raise RuntimeError(f"Unknown Provider Type: {name}")
            elif not self._enable_fallback:
                # ORT drops a known provider it cannot load and warns; with fallback disabled Onyx
                # refuses instead, so a program that must not run on CPU finds out.
                raise _C.EPFail(f"{name} is not available in this build (available: {', '.join(available)}) "
                                "and fallback is disabled")
        given = dict(zip(names, options))
        if "CPUExecutionProvider" not in use:
            use.append("CPUExecutionProvider")
        for name in use:
            # Options are checked (never dropped: an unknown key, a bad value or one not honoured yet is
            # InvalidArgument) before the device is looked for.
            _C.check_provider_options(name, given.get(name, {}))
        for name in use:
            reason = _C.provider_unavailable_reason(name)
            if reason:
                # ONNX Runtime's CUDA provider throws from its constructor on a machine without a GPU, a
                # RuntimeError here, which __init__'s fallback to CPU catches (or passes on, fallback disabled).
                raise RuntimeError(f"{name} cannot be created: no usable device: {reason}")
        c_options = self._sess_options._to_c(use)
        c_options.provider_options = {name: given[name] for name in use if given.get(name)}
        if self._disabled_optimizers:
            c_options.config_entries = {**c_options.config_entries,
                                        "optimization.disable_specified_optimizers": self._disabled_optimizers}
        self._sess = _C.Session(self._model, c_options)
        self._inputs_meta = [NodeArg(*a) for a in self._sess.inputs]
        self._outputs_meta = [NodeArg(*a) for a in self._sess.outputs]
        self._overridable_initializers = [NodeArg(*a) for a in self._sess.overridable_initializers]
        self._output_names = [o.name for o in self._outputs_meta]
        self._required = [i.name for i in self._inputs_meta if not i.type.startswith("optional")]
        self._model_meta = ModelMetadata(self._sess.metadata)
        self._providers = list(self._sess.providers())
        self._provider_options = {p: dict(given.get(p, {})) for p in self._providers}

    # Metadata.
    def get_session_options(self):
        return self._sess_options

    def get_inputs(self):
        return self._inputs_meta

    def get_outputs(self):
        return self._outputs_meta

    def get_overridable_initializers(self):
        return self._overridable_initializers

    def get_modelmeta(self):
        return self._model_meta

    def get_providers(self):
        return self._providers

    def explain(self):
        """Why the session runs its model as it does (not in ONNX Runtime): a dict with "nodes" (per
        node of the optimized graph: "provider" and the providers that "declined" it with why, the
        original nodes it "replaces", "created_by" and "rewritten_by" (the passes, as the optimizer
        recorded them), "kernel" (the variant it runs)), "removed" (original node -> its op and pass),
        "fusion_misses" (pattern, nodes, the condition that failed), "level", "providers", "notes".
        Provider names are ONNX Runtime's ("CPUExecutionProvider")."""
        e = self._sess.explain()

        def ort_name(name):
            return name if not name or name.endswith("ExecutionProvider") else name + "ExecutionProvider"

        e["providers"] = [ort_name(p) for p in e["providers"]]
        for node in e["nodes"]:
            node["provider"] = ort_name(node["provider"])
            node["declined"] = {ort_name(p): why for p, why in node["declined"].items()}
        return e

    def get_provider_options(self):
        return self._provider_options

    def set_providers(self, providers=None, provider_options=None):
        """Re-creates the session with these providers (ORT's semantics)."""
        self._create(providers, provider_options)

    def disable_fallback(self):
        self._enable_fallback = False

    def enable_fallback(self):
        self._enable_fallback = True

    # Running.
    def _validate_input(self, feed_input_names):
        missing = [name for name in self._required if name not in feed_input_names]
        if missing:
            raise ValueError(f"Required inputs ({missing}) are missing from input feed ({list(feed_input_names)}).")

    def run(self, output_names, input_feed, run_options=None):
        """Outputs (NumPy arrays, lists for sequences, dicts for maps, None) for `input_feed`."""
        self._validate_input(input_feed)
        return self._sess.run(output_names or self._output_names, input_feed, _c_run_options(run_options))

    def run_with_ort_values(self, output_names, input_dict_ort_values, run_options=None):
        """Like run, with OrtValues in and out."""
        self._validate_input(input_dict_ort_values)
        results = self._sess.run_values(output_names or self._output_names, input_dict_ort_values,
                                        _c_run_options(run_options))
        return [OrtValue(v) for v in results]

    def run_with_ortvaluevector(self, run_options, feed_names, feeds, fetch_names, fetches, fetch_devices):
        """Feeds and fetches as lists of C-level OrtValues; `fetches` receives the outputs."""
        results = self._sess.run_values(list(fetch_names), dict(zip(feed_names, feeds)), _c_run_options(run_options))
        fetches[:] = results

    def run_async(self, output_names, input_feed, callback, user_data, run_options=None):
        """Runs on another thread and calls callback(results, user_data, error_string)."""
        self._validate_input(input_feed)

        def work():
            try:
                results = self.run(output_names, input_feed, run_options)
            except Exception as e:  # noqa: BLE001 - handed to the callback, as ORT does
                callback([], user_data, str(e))
                return
            callback(results, user_data, "")

        threading.Thread(target=work, daemon=True).start()

    def io_binding(self):
        return IOBinding(self)

    def run_with_iobinding(self, iobinding, run_options=None):
        if iobinding._session is not self._sess:
            raise ValueError("IOBinding must be used with the session that created it.")
        iobinding._run(self._sess, _c_run_options(run_options))

    def create_ortvalue_from_shape_and_type(self, shape, element_type, device_type, device_id=0, vendor_id=-1):
        return OrtValue.ortvalue_from_shape_and_type(shape, element_type, device_type, device_id, vendor_id)

    # Profiling.
    def end_profiling(self):
        """Writes the profile (ORT's Chrome-trace JSON) and returns its path ('' when off)."""
        return self._sess.end_profiling()

    def get_profiling_start_time_ns(self):
        return self._sess.profiling_start_time_ns()

    def get_fused_operator_statistics(self):
        return self._sess.fused_operator_statistics()


def _c_run_options(run_options):
    if run_options is None:
        return None
    run_options._resolve_severity()  # -1 follows the default logger as it is now
    return run_options._c
