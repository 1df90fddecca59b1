package harness

import "github.com/kernelgate/kernelgate/eval"

// The vocabulary is package eval's (harness runs evaluations, eval names
// them). These aliases let this package's own code keep its short names;
// other packages import eval (imports_test.go fails one that imports harness
// for these alone).

type (
	Status       = eval.Status
	Runtime      = eval.Runtime
	Tolerance    = eval.Tolerance
	Env          = eval.Env
	Verdict      = eval.Verdict
	DeviceMemory = eval.DeviceMemory
	WallCheck    = eval.WallCheck
	TaskInfo     = eval.TaskInfo
	OutputSpec   = eval.OutputSpec
	Options      = eval.Options
	Requires     = eval.Requires
	Task         = eval.Task
	Job          = eval.Job
	CheckOptions = eval.CheckOptions
)

const (
	StatusCorrect           = eval.StatusCorrect
	StatusIncorrect         = eval.StatusIncorrect
	StatusCompileError      = eval.StatusCompileError
	StatusRuntimeError      = eval.StatusRuntimeError
	StatusTimeout           = eval.StatusTimeout
	StatusCompileTimeout    = eval.StatusCompileTimeout
	StatusResourceLimit     = eval.StatusResourceLimit
	StatusRewardHack        = eval.StatusRewardHack
	StatusInvalidSubmission = eval.StatusInvalidSubmission
	StatusHarnessError      = eval.StatusHarnessError
	FlagSideStream          = eval.FlagSideStream
	FlagThread              = eval.FlagThread
	FlagLazyOutput          = eval.FlagLazyOutput
	FlagPatch               = eval.FlagPatch
	FlagStaleMemory         = eval.FlagStaleMemory
	FlagInputMutation       = eval.FlagInputMutation
	FlagCache               = eval.FlagCache
	FlagPhaseDetect         = eval.FlagPhaseDetect
	FlagDeferredBatch       = eval.FlagDeferredBatch
	FlagDecoy               = eval.FlagDecoy
	FlagPrecision           = eval.FlagPrecision
	FlagDegenerate          = eval.FlagDegenerate
	FlagHardcode            = eval.FlagHardcode
	FlagIntrospection       = eval.FlagIntrospection
	FlagExit                = eval.FlagExit
	FlagEscape              = eval.FlagEscape
	FlagResource            = eval.FlagResource
	FlagCachePoison         = eval.FlagCachePoison
	FlagCompilePassthrough  = eval.FlagCompilePassthrough
	FlagTooFast             = eval.FlagTooFast
	FlagForge               = eval.FlagForge
	FlagNoTriton            = eval.FlagNoTriton
	TimingGPU               = eval.TimingGPU
	TimingCPUInterpreter    = eval.TimingCPUInterpreter
	SchemaVersion           = eval.SchemaVersion
	DefaultMemoryLimitMB    = eval.DefaultMemoryLimitMB
	MinHostMemoryMB         = eval.MinHostMemoryMB
)

var (
	Statuses       = eval.Statuses
	HackFlags      = eval.HackFlags
	DefaultOptions = eval.DefaultOptions
	HashSource     = eval.HashSource
	HostMemoryMB   = eval.HostMemoryMB
)
