// The DOM helpers are the trace viewer's (the gateway serves them without a build step).
export * from '../../../gateway/viewer/dom.js';
