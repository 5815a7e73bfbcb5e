%% @doc The results store: one run directory (DESIGN.md, "Run directory").
%%
%% Rows are appended as they are measured, each iteration in a single write, and a file cut short
%% by a kill loses only its unfinished last line, which `open/1' trims. Whole files (`run.json',
%% outputs) are written to a temporary name and renamed. Reopening a run directory gives back the
%% set of finished iterations, so a rerun measures none of them again.
%%
%% Iterations are numbered per environment point across its launches (launch L of I iterations
%% holds I*(L-1)+1..I*L), and `measurements.csv' ends with the `launch' column. A file from
%% before launches (no such column) is read as launch 1; reopened to continue it, its rows are
%% rewritten with `launch' 1, once, so every row of a file has the same columns.
-module(beamscale_store).

-export([open/1, close/1, dir/1, done/3, finished/1, record/5, record_failure/4, save_output/4,
         output_file/3, measurements/1, failures/1, write_file/2, read_rows/1, open_csv/2,
         format_error/1]).
-export_type([store/0, key/0]).

%% An iteration is identified by benchmark, args text and environment key.
-type key() :: {Bench :: binary(), Args :: binary(), Env :: binary()}.
-opaque store() :: #{dir := file:filename(), lock := file:filename(),
                     measurements := file:io_device(),
                     failures := file:io_device(), done := #{{key(), non_neg_integer()} => true}}.

-define(MEASUREMENTS_HEADER,
        [benchmark, phase, args, otp, erl_args, schedulers, nodes, iteration, seconds, launch]).
%% Held while a run appends to the directory (`open/1').
-define(MAX_COLUMNS, 512).
-define(FAILURES_HEADER,
        [benchmark, args, otp, erl_args, schedulers, nodes, iteration, reason]).

%% @doc Open (or create) the run directory `Dir', held by this emulator until `close/1'
%% (`beamscale_target_lock': a second run on it at once would measure its iterations twice).
-spec open(file:filename()) -> {ok, store()} | {error, {?MODULE, term()}}.
open(Dir) ->
    Lock = beamscale_format_rundir:path(Dir, lock),
    Me = io_lib:format("a run of OS pid ~s (node ~ts)", [os:getpid(), node()]),
    case filelib:ensure_path(beamscale_format_rundir:path(Dir, output)) of
        ok ->
            case beamscale_target_lock:take(Lock, Me) of
                ok -> {ok, open_files(Dir, Lock)};
                {in_use, Holder} -> {error, {?MODULE, {in_use, Dir, Holder}}};
                {error, Reason} -> {error, {?MODULE, {Lock, Reason}}}
            end;
        {error, Reason} ->
            {error, {?MODULE, {Dir, Reason}}}
    end.

open_files(Dir, Lock) ->
    MFile = beamscale_format_rundir:path(Dir, measurements),
    ok = add_launch_column(MFile),
    {MRows, M} = open_csv(MFile, ?MEASUREMENTS_HEADER),
    {FRows, F} = open_csv(beamscale_format_rundir:path(Dir, failures), ?FAILURES_HEADER),
    Done = maps:from_list([{done_key(R), true} || R <- MRows ++ FRows]),
    #{dir => Dir, lock => Lock, measurements => M, failures => F, done => Done}.

%% @doc One line for an error of `open/1'.
-spec format_error(term()) -> iodata().
format_error({header, File, Why}) -> io_lib:format("~ts: ~ts", [File, Why]);
format_error({in_use, Dir, Holder}) ->
    io_lib:format("~ts is in use by ~ts: wait for that run to end, or give another --name",
                  [Dir, Holder]);
format_error({Path, Posix}) when is_atom(Posix) ->
    io_lib:format("cannot create the run directory ~ts: ~ts", [Path, file:format_error(Posix)]).

%% @doc Close the files of a store and let go of its directory.
-spec close(store()) -> ok.
close(#{measurements := M, failures := F, lock := Lock}) ->
    ok = file:close(M),
    ok = file:close(F),
    beamscale_target_lock:release(Lock).

%% @doc The run directory.
-spec dir(store()) -> file:filename().
dir(#{dir := Dir}) -> Dir.

%% @doc Whether iteration `N' of `Key' was measured (or failed) already.
-spec done(store(), key(), pos_integer()) -> boolean().
done(#{done := Done}, Key, N) -> is_map_key({Key, N}, Done).

%% @doc The iterations measured or failed so far (a job that could not start is none of them).
-spec finished(store()) -> [{key(), pos_integer()}].
finished(#{done := Done}) -> [KN || {_, N} = KN <- maps:keys(Done), N > 0].

%% @doc Append the phase timings of iteration `N', measured in launch `Launch', in one write.
-spec record(store(), key(), pos_integer(), pos_integer(), [{string(), float()}]) -> store().
record(#{measurements := M} = Store, {Bench, Args, Env} = Key, N, Launch, Timings) ->
    EnvFields = beamscale_format_env:fields(Env),
    Rows = [beamscale_format_csv:line([Bench, Phase, Args] ++ EnvFields ++ [N, Seconds, Launch])
            || {Phase, Seconds} <- Timings],
    ok = file:write(M, Rows),
    mark(Store, Key, N).

%% @doc Append a failed iteration with its reason: a term, or text already in words (kept as
%% it is). Iteration 0 is a job that could not start at all.
-spec record_failure(store(), key(), non_neg_integer(), term()) -> store().
record_failure(#{failures := F} = Store, {Bench, Args, Env} = Key, N, Reason) ->
    Text = case Reason of
               <<_/binary>> -> Reason;
               _ -> unicode:characters_to_binary(io_lib:format("~0tp", [Reason],
                                                               [{chars_limit, 400}]))
           end,
    Row = [Bench, Args] ++ beamscale_format_env:fields(Env) ++ [N, Text],
    ok = file:write(F, beamscale_format_csv:line(Row)),
    mark(Store, Key, N).

%% @doc Keep what an iteration of `Key' printed, unless a file for it is there already.
-spec save_output(store(), key(), binary(), boolean()) -> ok.
save_output(#{dir := Dir}, Key, Output, Replace) ->
    File = filename:join(Dir, output_file(Key)),
    case Replace orelse not filelib:is_regular(File) of
        true -> write_file(File, Output);
        false -> ok
    end.

%% @doc Where the output of `Key' is kept, relative to the run directory.
-spec output_file(binary(), binary(), binary()) -> file:filename().
output_file(Bench, Args, Env) -> output_file({Bench, Args, Env}).

output_file({Bench, Args, Env}) ->
    Hash = integer_to_list(erlang:phash2(Args, 1 bsl 32), 16),
    [Otp, ErlArgs, S, N] = binary:split(Env, <<"/">>, [global]),
    Name = [Bench, "__", Otp, ".", ErlArgs, ".s", S, ".n", N, "__", Hash, ".txt"],
    filename:join(beamscale_format_rundir:name(output), binary_to_list(iolist_to_binary(Name))).

%% @doc The measurement rows of a run directory, as maps of binaries (header names as keys).
-spec measurements(file:filename()) -> [#{atom() => binary()}].
measurements(Dir) -> read_rows(beamscale_format_rundir:path(Dir, measurements)).

%% @doc The failure rows of a run directory.
-spec failures(file:filename()) -> [#{atom() => binary()}].
failures(Dir) -> read_rows(beamscale_format_rundir:path(Dir, failures)).

%% @doc The complete rows of a CSV file with a header, as maps.
-spec read_rows(file:filename()) -> [#{atom() => binary()}].
read_rows(File) ->
    case file:read_file(File) of
        {ok, Bin} ->
            case beamscale_format_csv:parse(Bin) of
                {[Header | Rows], _} ->
                    Keys = header_keys(File, Header),
                    [maps:from_list(lists:zip(Keys, R)) || R <- Rows, length(R) =:= length(Keys)];
                {[], _} -> []
            end;
        {error, enoent} -> []
    end.

%% A run directory may come from anywhere (`compare', `report'): its header names become atoms
%% only when they look like ours, and few enough of them.
header_keys(File, Header) when length(Header) > ?MAX_COLUMNS ->
    error({?MODULE, {header, File, io_lib:format("more than ~b columns", [?MAX_COLUMNS])}});
header_keys(File, Header) ->
    [case re:run(H, "^[a-z][a-z0-9_]{0,63}$", [{capture, none}]) of
         match -> binary_to_atom(H);
         nomatch -> error({?MODULE, {header, File, io_lib:format("column ~0p is not a name of "
                                                                 "beamscale's", [H],
                                                                 [{chars_limit, 80}])}})
     end || H <- Header].

%% @doc Write a whole file so that a reader sees the old or the new content, never a mix. The
%% temporary file is made new (O_EXCL) after any left one is removed: a symlink planted under
%% its name in a shared directory is removed, never written through. A write that fails (a
%% full disk) removes its temporary file before it raises: nothing is left but the old file.
-spec write_file(file:filename(), iodata()) -> ok.
write_file(File, Data) ->
    ok = beamscale_format_file:written(filelib:ensure_dir(File), File),
    Tmp = File ++ ".tmp",
    _ = file:delete(Tmp),
    Opened = file:open(Tmp, [write, exclusive, raw, binary]),
    ok = beamscale_format_file:written(Opened, Tmp),
    {ok, Fd} = Opened,
    try
        ok = beamscale_format_file:written(file:write(Fd, Data), File),
        ok = beamscale_format_file:written(file:close(Fd), File),
        ok = beamscale_format_file:written(file:rename(Tmp, File), File)
    catch Class:Reason:Stack ->
        _ = file:close(Fd),
        _ = file:delete(Tmp),
        erlang:raise(Class, Reason, Stack)
    end.

%% @doc Open a CSV for appending: write its header if new, drop an unfinished last line if cut
%% short. Returns the complete rows already there (as maps) and the file, positioned at its end.
-spec open_csv(file:filename(), [atom()]) -> {[#{atom() => binary()}], file:io_device()}.
open_csv(File, Header) ->
    {Rows, Keep} = case file:read_file(File) of
                       {ok, Bin} -> beamscale_format_csv:parse(Bin);
                       {error, enoent} -> {[], 0}
                   end,
    {ok, Fd} = file:open(File, [read, write, raw, binary]),
    {ok, _} = file:position(Fd, Keep),
    ok = file:truncate(Fd),
    case Rows of
        [] -> ok = file:write(Fd, beamscale_format_csv:line(Header));
        _ -> ok
    end,
    Keys = Header,
    Maps = [maps:from_list(lists:zip(Keys, R))
            || R <- tl_or_empty(Rows), length(R) =:= length(Keys)],
    {Maps, Fd}.

%%% Internals

%% A measurements file from before launches: its rows were measured in one launch each.
add_launch_column(File) ->
    Old = lists:droplast(?MEASUREMENTS_HEADER),
    OldHeader = [atom_to_binary(H) || H <- Old],
    case file:read_file(File) of
        {ok, Bin} ->
            case beamscale_format_csv:parse(Bin) of
                {[OldHeader | Rows], _} ->
                    Lines = [beamscale_format_csv:line(R ++ [1])
                             || R <- Rows, length(R) =:= length(Old)],
                    write_file(File, [beamscale_format_csv:line(?MEASUREMENTS_HEADER) | Lines]);
                _ -> ok
            end;
        {error, enoent} -> ok
    end.

tl_or_empty([]) -> [];
tl_or_empty([_ | T]) -> T.

done_key(#{benchmark := B, args := A, iteration := I} = Row) ->
    {{B, A, beamscale_format_env:key(Row)}, binary_to_integer(I)}.

mark(#{done := Done} = Store, Key, N) -> Store#{done := Done#{{Key, N} => true}}.
