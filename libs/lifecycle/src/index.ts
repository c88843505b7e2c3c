export { createLifecycle, type Lifecycle, type LifecycleOptions, type StopResult, type Closer } from './lifecycle';
export { installSignalHandlers, type SignalHandlerOptions, type ProcessEvents } from './signal-handlers';
