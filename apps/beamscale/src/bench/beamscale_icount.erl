%% @doc The instruction clock (`--clock instructions'), on this side: which counter (the CPU's,
%% where perf_event_open opens one, else Valgrind's callgrind), the NIF built at first use
%% with gcc and cached by OTP release and source hash, and the node under test started for it:
%% one scheduler, no busy wait, under Valgrind for callgrind (a boot of 6-8 s instead of 1 s on
%% a quiet host: hence its own boot timeout).
-module(beamscale_icount).

-export([counter/1, build/2, node_spec/3, dump_dir/0, measure/4, prepare/2, format_error/1]).
-export_type([counter/0, budget/0]).

-type counter() :: valgrind | pmu.
%% Counted samples of a point and calls per sample (auto: calibrated on the node).
-type budget() :: #{samples := pos_integer(), calls := pos_integer() | auto}.

%% Counting a point's samples under Valgrind: seconds for a call of microseconds.
-define(COUNT_TIMEOUT, 600000).

-define(GCC_TIMEOUT, 60000).
%% Valgrind runs the boot's ~620 M instructions at ~90 M/s alone: 7 s; at a load of 15-20 on
%% 2 cores 40 s to over 180 s.
-define(VALGRIND_BOOT_TIMEOUT, 600000).
-define(NO_BUSY_WAIT, "+sbwt none +sbwtdcpu none +sbwtdio none").
%% The counted sample's heaps in carriers of their own (beamscale_bench_icount:carrier_flag/0).
%% Valgrind runs one thread at a time: with the default dozen dirty and async threads a boot
%% on a loaded host took over 180 s, with these 40-55 s (load 20 on 2 cores).
-define(FEW_THREADS, "+SDcpu 1:1 +SDio 1").
%% A node too slow to set up its connection back to this one within net_setuptime (7 s) halts,
%% and `peer' then waits out its whole boot timeout: under Valgrind on a loaded host it was.
-define(SLOW_SETUP, "-kernel net_setuptime 120").
-define(HEADERS, "/usr/include/valgrind/callgrind.h").

%% @doc The counter to use: `auto' takes the CPU's when this host has one (probed on this
%% node's own thread through the NIF), else callgrind; a counter asked for and absent is
%% refused in words.
-spec counter(auto | counter()) -> {ok, counter()} | {error, {?MODULE, term()}}.
counter(Choice) ->
    case {Choice, pmu_here()} of
        {pmu, ok} -> {ok, pmu};
        {pmu, {error, Why}} -> {error, {?MODULE, {no_pmu, Why}}};
        {auto, ok} -> {ok, pmu};
        {_, {error, {?MODULE, _}} = Error} -> Error;
        _ -> valgrind_there()
    end.

pmu_here() ->
    case build(code:root_dir(), erlang:system_info(otp_release)) of
        {ok, So} ->
            case beamscale_bench_icount:load(So) of
                ok -> beamscale_bench_icount:pmu();
                Error -> Error
            end;
        Error -> Error
    end.

valgrind_there() ->
    case os:find_executable("valgrind") of
        false -> {error, {?MODULE, no_valgrind}};
        _ -> {ok, valgrind}
    end.

%% @doc The NIF for an emulator of release `Release' whose root is `Root' (its headers in
%% ROOT/usr/include): `{ok, Path}' without the extension, built unless cached.
-spec build(file:filename(), string()) -> {ok, file:filename()} | {error, {?MODULE, term()}}.
build(Root, Release) ->
    Src = beamscale_icount_c:source(),
    Hash = binary:encode_hex(binary:part(crypto:hash(sha256, Src), 0, 8)),
    Dir = filename:join([filename:basedir(user_cache, "beamscale"), "icount",
                         Release ++ "-" ++ string:lowercase(binary_to_list(Hash))]),
    Base = filename:join(Dir, "beamscale_bench_icount"),
    case filelib:is_regular(Base ++ ".so") of
        true -> {ok, Base};
        false -> compile(Root, Src, Dir, Base)
    end.

compile(Root, Src, Dir, Base) ->
    case {os:find_executable("gcc"), filelib:is_regular(?HEADERS)} of
        {false, _} -> {error, {?MODULE, no_gcc}};
        {_, false} -> {error, {?MODULE, no_headers}};
        {Gcc, true} ->
            ok = filelib:ensure_dir(Base),
            Tmp = Base ++ "." ++ os:getpid(),
            ok = file:write_file(Tmp ++ ".c", Src),
            Args = ["-O2", "-shared", "-fPIC", "-I", filename:join([Root, "usr", "include"]),
                    "-o", Tmp ++ ".so", Tmp ++ ".c"],
            Result = beamscale_os:cmd(Gcc, Args, ?GCC_TIMEOUT),
            _ = file:delete(Tmp ++ ".c"),
            case Result of
                %% Renamed into place: a build beside it never loads a half-written file.
                {0, _} -> ok = file:rename(Tmp ++ ".so", Base ++ ".so"), {ok, Base};
                {Status, Out} -> {error, {?MODULE, {gcc, Dir, Status, Out}}}
            end
    end.

%% @doc What `beamscale_node:start/2' needs for a node counted by `Counter' (its callgrind
%% dumps in `Dir'): one scheduler and no busy wait (a busy-waiting scheduler counts in
%% proportion to wall time), the counted heaps each in a carrier of its own, and for callgrind
%% Valgrind before the erl.
-spec node_spec(counter(), file:filename(), beamscale_node:spec()) -> beamscale_node:spec().
node_spec(Counter, Dir, #{flags := Flags} = Spec) ->
    Own = lists:join(" ", [Flags, ?NO_BUSY_WAIT, beamscale_bench_icount:carrier_flag()]),
    Node = Spec#{schedulers => 1, flags => string:trim(lists:flatten(Own))},
    case Counter of
        pmu -> Node;
        valgrind ->
            Node#{flags := lists:flatten(lists:join(" ", [maps:get(flags, Node), ?FEW_THREADS,
                                                          ?SLOW_SETUP])),
                  boot_timeout => ?VALGRIND_BOOT_TIMEOUT,
                  wrap => [os:find_executable("valgrind"), "-q", "--tool=callgrind",
                           "--collect-atstart=no", "--smc-check=all", "--trace-children=yes",
                           "--fair-sched=yes",
                           %% The port programs need not run under Valgrind.
                           "--trace-children-skip=*/erl_child_setup,*/inet_gethost,*/epmd",
                           "--callgrind-out-file=" ++ filename:join(Dir, "cg.%p"),
                           "--log-file=" ++ filename:join(Dir, "valgrind.%p.log")]}
    end.

%% @doc A fresh private directory for a node's callgrind dumps (the caller removes it).
-spec dump_dir() -> file:filename().
dump_dir() -> beamscale_os:private_dir("beamscale-icount-").

%% @doc Count the benchmark `Mod' and the empty loop `Empty' on `Node' (the same calls per
%% sample: what the harness adds to a sample is the same in both, and subtracted): the
%% instructions per call with their spread over the samples, and the counter used.
-spec measure(node(), {counter(), file:filename()}, {module(), module()}, budget()) ->
    {ok, map()} | {error, term()}.
measure(Node, Counter, {Mod, Empty}, Budget) ->
    case prepare(Node, Counter) of
        {ok, C} ->
            case count(Node, Mod, C, Budget) of
                {ok, [{Calls, _} | _] = Samples} ->
                    case count(Node, Empty, C, Budget#{calls => Calls}) of
                        {ok, E} ->
                            Summary = beamscale_stats_instr:summary(Samples, E),
                            Heap = erpc:call(Node, beamscale_bench_icount, heap_words, []),
                            {ok, Summary#{counter => element(1, Counter),
                                          counted_heap_words => Heap}};
                        Error -> Error
                    end;
                Error -> Error
            end;
        Error -> Error
    end.

count(Node, Mod, C, Budget) ->
    try erpc:call(Node, beamscale_bench_icount, count, [Mod, C, Budget], ?COUNT_TIMEOUT)
    catch error:{erpc, timeout} -> {error, {?MODULE, {count_timeout, Mod}}}
    end.

%% @doc Load the NIF onto `Node' (built for its release); the counter's argument of
%% `beamscale_bench_icount:count/3'. Under Valgrind the node must say it runs there.
-spec prepare(node(), {counter(), file:filename() | none}) ->
    {ok, beamscale_bench_icount:counter()} | {error, term()}.
prepare(Node, {Counter, Dir}) ->
    Root = erpc:call(Node, code, root_dir, []),
    Release = erpc:call(Node, erlang, system_info, [otp_release]),
    Steps = [fun() -> build(Root, Release) end,
             fun(_) -> beamscale_code:ensure(Node, beamscale_bench_icount) end,
             fun(So) -> erpc:call(Node, beamscale_bench_icount, load, [So]) end],
    case steps(Steps) of
        ok -> there(Counter, Dir, erpc:call(Node, beamscale_bench_icount, on_valgrind, []));
        Error -> Error
    end.

%% The build, then each step given the NIF's path, up to the first error.
steps([Build | Rest]) ->
    case Build() of
        {ok, So} -> lists:foldl(fun(F, ok) -> F(So); (_, Error) -> Error end, ok, Rest);
        Error -> Error
    end.

there(pmu, _Dir, _) -> {ok, pmu};
there(valgrind, Dir, N) when N > 0 -> {ok, {valgrind, Dir}};
there(valgrind, _Dir, 0) -> {error, {?MODULE, not_on_valgrind}}.

%% @doc One line for an error.
-spec format_error(term()) -> iodata().
format_error(no_gcc) ->
    "gcc not found: the instruction clock builds a small NIF (apt-get install gcc)";
format_error(no_headers) ->
    [?HEADERS, " not found: the instruction clock needs Valgrind (apt-get install valgrind)"];
format_error(no_valgrind) ->
    "valgrind not found: this host has no CPU instruction counter, and the instruction clock "
    "then counts under Valgrind (apt-get install valgrind)";
format_error({no_pmu, Why}) ->
    ["--counter pmu: this host has no CPU instruction counter (perf_event_open: ", Why,
     "; a VM often exposes none): use --counter valgrind"];
format_error({count_timeout, Mod}) ->
    io_lib:format("counting ~s's instructions took over ~b s (give fewer --calls)",
                  [Mod, ?COUNT_TIMEOUT div 1000]);
format_error(not_on_valgrind) -> "the node under test does not run under Valgrind";
format_error({gcc, Dir, Status, Out}) ->
    io_lib:format("gcc could not build the instruction clock's NIF in ~ts (status ~p): ~ts",
                  [Dir, Status, string:slice(Out, 0, 600)]).
