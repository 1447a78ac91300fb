// SPEC Appendix E.1: implemented by the controller and passed to the provider in callAsync.
// Method order fixes the transaction codes: onResult = 1, onProgress = 2.
package ai.aci.core;

import ai.aci.core.ACIResponse;

interface IACICallback {
    void onResult(in ACIResponse response);
    // progress 0..100; a Java peer may send a null message (@nullable changes no wire bytes).
    void onProgress(int progress, @nullable String message);
}
