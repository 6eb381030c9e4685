/** The fault of the error `promise` rejects with, which must be an `errorClass`. */
export async function faultOf<F>(promise: Promise<unknown>, errorClass: abstract new (...args: never[]) => { readonly fault: F }): Promise<F> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof errorClass) return error.fault;
    throw error;
  }
  throw new Error(`expected a ${errorClass.name}`);
}
