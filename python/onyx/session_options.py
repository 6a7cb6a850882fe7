"""SessionOptions, RunOptions and their enums, as ONNX Runtime has them (same names, defaults and
checks). Each attribute Onyx honours maps to onyx::SessionOptions / RunOptions
(include/onyx/session.h); one it cannot honour is an error naming it when set to anything but
its default, never silently ignored."""
from enum import IntEnum

from onyx import _C
from onyx import providers as _providers


class GraphOptimizationLevel(IntEnum):
    ORT_DISABLE_ALL = 0
    ORT_ENABLE_BASIC = 1
    ORT_ENABLE_EXTENDED = 2
    ORT_ENABLE_LAYOUT = 3
    ORT_ENABLE_ALL = 99


class ExecutionMode(IntEnum):
    ORT_SEQUENTIAL = 0
    ORT_PARALLEL = 1


class ExecutionOrder(IntEnum):
    DEFAULT = 0
    PRIORITY_BASED = 1
    MEMORY_EFFICIENT = 2


def _not_honoured(what, value, default):
    return _C.NotImplemented(f"{what} = {value!r}: Onyx does not honour this setting (only {default!r})")


def _as_enum(enum, value, what):
    try:
        return enum(value)
    except ValueError:
        raise TypeError(f"{what} must be a {enum.__name__}, got {value!r}") from None


def _check(value, kind, what):
    if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise TypeError(f"{what} must be an int, got {value!r}")
    if kind is bool and not isinstance(value, (bool, int)):
        raise TypeError(f"{what} must be a bool, got {value!r}")
    if kind is str and not isinstance(value, str):
        raise TypeError(f"{what} must be a str, got {value!r}")
    return kind(value)


class SessionOptions:
    """ONNX Runtime's SessionOptions. Defaults are ONNX Runtime 1.31's."""

    optimized_model_filepath = ""
    intra_op_num_threads = 0
    inter_op_num_threads = 0
    enable_cpu_mem_arena = True
    enable_mem_pattern = True
    enable_mem_reuse = True
    enable_profiling = False
    profile_file_prefix = "onnxruntime_profile_"
    log_severity_level = -1  # -1: the default logger's (set_default_logger_severity)
    log_verbosity_level = 0
    logid = ""
    use_deterministic_compute = False
    use_per_session_threads = True

    def __init__(self):
        self._graph_optimization_level = GraphOptimizationLevel.ORT_ENABLE_ALL
        self._execution_mode = ExecutionMode.ORT_SEQUENTIAL
        self._config = {}
        self._initializers = []  # (name, OrtValue): kept alive, the session reads their bytes
        self._free_dims = {}
        self._providers = []  # add_provider: (name, options)

    # Typed attributes: ORT's pybind properties refuse wrong types; so do these.
    def __setattr__(self, name, value):
        if not name.startswith("_") and not hasattr(type(self), name):
            # A misspelt option would otherwise be a silently ignored one.
            raise AttributeError(f"'SessionOptions' object has no attribute '{name}'")
        kind = _ATTRIBUTE_TYPES.get(name)
        if kind is not None:
            value = _check(value, kind, f"SessionOptions.{name}")
        object.__setattr__(self, name, value)

    @property
    def graph_optimization_level(self):
        return self._graph_optimization_level

    @graph_optimization_level.setter
    def graph_optimization_level(self, value):
        self._graph_optimization_level = _as_enum(GraphOptimizationLevel, value, "graph_optimization_level")

    @property
    def execution_mode(self):
        return self._execution_mode

    @execution_mode.setter
    def execution_mode(self, value):
        self._execution_mode = _as_enum(ExecutionMode, value, "execution_mode")

    @property
    def execution_order(self):
        return ExecutionOrder.DEFAULT

    @execution_order.setter
    def execution_order(self, value):
        value = _as_enum(ExecutionOrder, value, "execution_order")
        if value != ExecutionOrder.DEFAULT:
            raise _not_honoured("SessionOptions.execution_order", value, ExecutionOrder.DEFAULT)

    def add_session_config_entry(self, key, value):
        """Passed to the session, which rejects keys it does not know (listing the ones it does)."""
        self._config[_check(key, str, "config key")] = _check(value, str, f"config entry '{key}'")

    def get_session_config_entry(self, key):
        if key not in self._config:
            raise RuntimeError(f"SessionOptions does not have configuration with key: {key}")
        return self._config[key]

    def add_initializer(self, name, ortvalue):
        """Replaces the model's initializer `name` by the OrtValue's tensor (its bytes, not a copy)."""
        from onyx.ortvalue import OrtValue

        if not isinstance(ortvalue, OrtValue):
            raise TypeError(f"add_initializer('{name}'): needs an OrtValue, got {type(ortvalue).__name__}")
        if not ortvalue.is_tensor():
            raise ValueError(f"add_initializer('{name}'): the OrtValue holds {ortvalue.data_type()}, not a tensor")
        self._initializers.append((_check(name, str, "initializer name"), ortvalue))

    def add_external_initializers(self, names, ortvalues):
        """Initializers stored outside the model, given in memory: they replace the model's."""
        if len(names) != len(ortvalues):
            raise ValueError(f"add_external_initializers: {len(names)} names for {len(ortvalues)} values")
        for name, value in zip(names, ortvalues):
            self.add_initializer(name, value)

    def add_free_dimension_override_by_name(self, dim_name, dim_value):
        """Fixes the symbolic input dimension `dim_name` to `dim_value` before optimization."""
        self._free_dims[_check(dim_name, str, "dimension name")] = _check(dim_value, int, f"dimension '{dim_name}'")

    def add_free_dimension_override_by_denotation(self, dim_denotation, dim_value):
        raise _C.NotImplemented(
            f"add_free_dimension_override_by_denotation('{dim_denotation}', {dim_value}): Onyx does not read "
            "dimension denotations; use add_free_dimension_override_by_name")

    def add_provider(self, provider_name, provider_options=None):
        """Providers for sessions created without a providers argument."""
        self._providers.append((provider_name, dict(provider_options or {})))

    def has_providers(self):
        return bool(self._providers)

    def register_custom_ops_library(self, library_path):
        raise _C.NotImplemented(
            f"register_custom_ops_library('{library_path}'): Onyx does not load ONNX Runtime custom-op libraries")

    def _to_c(self, execution_providers):
        """The onyx::SessionOptions these stand for."""
        c = _C.SessionOptions()
        level = self.graph_optimization_level
        # ORT_ENABLE_LAYOUT is every level up to layout, which in Onyx is all of them.
        c.graph_optimization_level = 99 if level == GraphOptimizationLevel.ORT_ENABLE_LAYOUT else int(level)
        c.execution_mode = int(self.execution_mode)
        c.optimized_model_filepath = self.optimized_model_filepath
        c.intra_op_num_threads = self.intra_op_num_threads
        c.inter_op_num_threads = self.inter_op_num_threads
        c.use_global_thread_pool = not self.use_per_session_threads
        c.enable_cpu_mem_arena = self.enable_cpu_mem_arena
        c.enable_mem_pattern = self.enable_mem_pattern
        c.enable_mem_reuse = self.enable_mem_reuse
        c.enable_profiling = self.enable_profiling
        c.profile_file_prefix = self.profile_file_prefix
        severity = self.log_severity_level
        c.log_severity_level = _providers.default_logger_severity() if severity == -1 else severity
        c.log_verbosity_level = self.log_verbosity_level or _providers.default_logger_verbosity()
        c.logid = self.logid
        c.use_deterministic_compute = self.use_deterministic_compute
        c.config_entries = dict(self._config)
        c.free_dimension_overrides_by_name = dict(self._free_dims)
        for name, value in self._initializers:
            c.add_initializer(name, value._ortvalue)
        c.execution_providers = list(execution_providers)
        return c


_ATTRIBUTE_TYPES = {
    "optimized_model_filepath": str, "intra_op_num_threads": int, "inter_op_num_threads": int,
    "enable_cpu_mem_arena": bool, "enable_mem_pattern": bool, "enable_mem_reuse": bool,
    "enable_profiling": bool, "profile_file_prefix": str, "log_severity_level": int,
    "log_verbosity_level": int, "logid": str, "use_deterministic_compute": bool,
    "use_per_session_threads": bool,
}

# Run config entries Onyx honours (others are an error naming the key).
_RUN_CONFIG_KEYS = {
    # "cpu:0" (any non-empty device list naming the CPU): return the arena's free blocks after the run.
    "memory.enable_memory_arena_shrinkage",
}


class RunOptions:
    """ONNX Runtime's RunOptions. `terminate` may be set from another thread to stop a running run."""

    def __init__(self):
        object.__setattr__(self, "_c", _C.RunOptions())
        object.__setattr__(self, "_config", {})
        self.log_severity_level = -1
        self.log_verbosity_level = 0

    @property
    def log_severity_level(self):
        return self._severity

    @log_severity_level.setter
    def log_severity_level(self, value):
        object.__setattr__(self, "_severity", _check(value, int, "RunOptions.log_severity_level"))
        self._resolve_severity()

    def _resolve_severity(self):
        value = self._severity
        self._c.log_severity_level = _providers.default_logger_severity() if value == -1 else value

    @property
    def log_verbosity_level(self):
        return self._c.log_verbosity_level

    @log_verbosity_level.setter
    def log_verbosity_level(self, value):
        self._c.log_verbosity_level = _check(value, int, "RunOptions.log_verbosity_level")

    @property
    def logid(self):
        return self._c.logid

    @logid.setter
    def logid(self, value):
        self._c.logid = _check(value, str, "RunOptions.logid")

    @property
    def terminate(self):
        return self._c.terminate

    @terminate.setter
    def terminate(self, value):
        self._c.terminate = _check(value, bool, "RunOptions.terminate")

    @property
    def only_execute_path_to_fetches(self):
        return False

    @only_execute_path_to_fetches.setter
    def only_execute_path_to_fetches(self, value):
        if value:
            raise _not_honoured("RunOptions.only_execute_path_to_fetches", value, False)

    def __setattr__(self, name, value):
        if not hasattr(type(self), name):
            raise AttributeError(f"'RunOptions' object has no attribute '{name}'")
        object.__setattr__(self, name, value)

    def add_run_config_entry(self, key, value):
        if key not in _RUN_CONFIG_KEYS:
            raise _C.InvalidArgument(
                f"run config entry '{key}': Onyx does not honour it (known: {', '.join(sorted(_RUN_CONFIG_KEYS))})")
        self._config[key] = _check(value, str, f"run config entry '{key}'")
        if key == "memory.enable_memory_arena_shrinkage":
            self._c.shrink_arena_after_run = "cpu" in value.lower()

    def get_run_config_entry(self, key):
        if key not in self._config:
            raise RuntimeError(f"RunOptions does not have configuration with key: {key}")
        return self._config[key]
