/* A stand-in for a vendor library, an ONNX Runtime provider file or a plugin EP:
   a shared object that is only its name, its DT_NEEDED entries and RUNPATH, and
   (for a provider) the ONNX Runtime version string ONNX Runtime compiles into
   its providers. Built without the C library, so it needs nothing but the other
   fakes: the tests decide what is present by copying, removing and renaming them. */
#ifdef FAKE_ORT_VERSION
__attribute__((used)) const char fake_onnxruntime_version[] = FAKE_ORT_VERSION;
#endif

#ifdef FAKE_PLUGIN_EP
/* The two entry points that make a library a plugin EP; never called (it cannot load). */
void* CreateEpFactories(void) { return 0; }
void ReleaseEpFactory(void) {}
#endif

#ifdef FAKE_DEFINES_VERSIONED
/* Under the symbol version versioned.map gives it, or none. */
int versioned_function(void) { return 2; }
#endif

#ifdef FAKE_CALLS_VERSIONED
/* Needs versioned_function at the version it was linked against (DT_VERNEED). */
int versioned_function(void);
int fake_calls_versioned(void) { return versioned_function(); }
#endif

int fake_library_marker(void) { return 0; }

/* Damaged ONNX Runtime look-alikes, named libonnxruntime.so.1: their OrtGetApiBase
   hands back nothing, a table with no functions, or a GetApi that serves no version.
   rung must say so (exit 3), never call through them. */
#ifdef FAKE_ORT_NULL_BASE
const void* OrtGetApiBase(void) { return 0; }
#endif
#ifdef FAKE_ORT_EMPTY_BASE
static const void* const empty_base[2] = {0, 0};
const void* OrtGetApiBase(void) { return empty_base; }
#endif
#ifdef FAKE_ORT_NO_API
static const void* no_api(unsigned version) { (void)version; return 0; }
static const char* version_string(void) { return "1.30.0"; }
struct fake_api_base { const void* (*get_api)(unsigned); const char* (*get_version_string)(void); };
static const struct fake_api_base no_api_base = {no_api, version_string};
const void* OrtGetApiBase(void) { return &no_api_base; }
#endif
