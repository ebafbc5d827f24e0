/* An application in C: starts rung's engine on the PP-OCR angle classifier, runs
 * it on one crop and prints the result, through the C ABI (rung/rung.h) alone.
 *
 *   classify CLASSIFIER.onnx INPUT.bin CACHE_DIR [KEY=VALUE...]
 *
 * INPUT.bin holds the classifier's input, 1 x 3 x 48 x 192 float32 values, raw
 * little-endian. Each KEY=VALUE is an engine option (rung.h lists them). Prints
 * the about line, the rung the session ran on, the job's model ids, the output's
 * name and shape, and its bytes in hex; exits with the code rung's CLI gives
 * for the failure (2 bad input, 3 no runtime, 1 otherwise). */
#include <rung/rung.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(rung_status* status) {
  int code = rung_status_exit_code(status);
  fprintf(stderr, "classify: %s\n", rung_status_message(status));
  rung_status_free(status);
  return code;
}

static int usage(const char* why) {
  fprintf(stderr, "classify: %s\nusage: classify CLASSIFIER.onnx INPUT.bin CACHE_DIR [KEY=VALUE...]\n", why);
  return 2;
}

static void on_progress(void* user, const rung_progress* progress) {
  (void)progress;
  ++*(int*)user;
}

int main(int argc, char** argv) {
  if (argc < 4) return usage("three arguments are required");
  enum { kElements = 3 * 48 * 192 };
  static float pixels[kElements];
  FILE* in = fopen(argv[2], "rb");
  if (in == NULL) return usage("cannot open the input file");
  size_t got = fread(pixels, sizeof(float), kElements, in);
  int extra = fgetc(in);
  fclose(in);
  if (got != kElements || extra != EOF) return usage("the input file does not hold 1 x 3 x 48 x 192 float32 values");

  rung_options* options = NULL;
  rung_status* st = rung_options_create(&options);
  if (st != NULL) return fail(st);
  int progress_calls = 0;
  if ((st = rung_options_set(options, "cache_dir", argv[3])) != NULL ||
      (st = rung_options_add_model(options, "ppocr_cls", argv[1], "generic")) != NULL ||
      (st = rung_options_set_progress(options, on_progress, &progress_calls)) != NULL) {
    rung_options_free(options);
    return fail(st);
  }
  for (int i = 4; i < argc; ++i) {
    char* eq = strchr(argv[i], '=');
    if (eq == NULL) {
      rung_options_free(options);
      return usage("an option is KEY=VALUE");
    }
    *eq = '\0';
    if ((st = rung_options_set(options, argv[i], eq + 1)) != NULL) {
      rung_options_free(options);
      return fail(st);
    }
  }

  rung_engine* engine = NULL;
  st = rung_engine_start(options, &engine);
  rung_options_free(options); /* the engine copied what it needs */
  if (st != NULL) return fail(st);
  rung_engine_wait_until_settled(engine, -1);
  char* about = rung_engine_about_line(engine);
  printf("about: %s\n", about);
  rung_string_free(about);

  rung_job* job = NULL;
  rung_session* session = NULL;
  rung_value* input = NULL;
  rung_value** outputs = NULL;
  size_t n_outputs = 0;
  const int64_t shape[4] = {1, 3, 48, 192};
  if ((st = rung_engine_open_job(engine, &job)) != NULL || (st = rung_job_session(job, "ppocr_cls", &session)) != NULL ||
      (st = rung_value_create_view("x", RUNG_FLOAT32, shape, 4, pixels, sizeof pixels, &input)) != NULL ||
      (st = rung_session_run(session, (const rung_value* const*)&input, 1, &outputs, &n_outputs)) != NULL) {
    rung_value_free(input);
    rung_job_free(job);
    rung_engine_free(engine);
    return fail(st);
  }
  char* ids = rung_job_model_ids_json(job);
  printf("rung: %s\nmodel id: %s\nmodel ids: %s\nprogress reported: %s\n", rung_session_rung(session), rung_session_model_id(session),
         ids, progress_calls > 0 ? "yes" : "no");
  rung_string_free(ids);
  for (size_t i = 0; i < n_outputs; ++i) {
    size_t rank = 0, size = 0;
    const int64_t* dims = rung_value_shape(outputs[i], &rank);
    const unsigned char* bytes = (const unsigned char*)rung_value_data(outputs[i], &size);
    printf("output %s %s [", rung_value_name(outputs[i]), rung_element_type_name(rung_value_element_type(outputs[i])));
    for (size_t d = 0; d < rank; ++d) printf(d == 0 ? "%lld" : ", %lld", (long long)dims[d]);
    printf("] ");
    for (size_t b = 0; b < size; ++b) printf("%02x", bytes[b]);
    printf("\n");
  }
  rung_values_free(outputs, n_outputs);
  rung_value_free(input);
  rung_job_free(job);
  rung_engine_free(engine);
  return 0;
}
