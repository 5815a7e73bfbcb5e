%% @private Tsung's `<client type="batch" batch="...">' for `beamscale_load_tsung_clients': the
%% hosts of the batch job the test runs in, read as Tsung's `ts_config:get_batch_nodes/1' reads
%% them. torque (or pbs) and oar: the file named by `$PBS_NODEFILE' or `$OAR_NODEFILE', a host a
%% line; lsf: `$LSB_HOSTS', hosts apart by spaces; slurm (a later Tsung's): `$SLURM_NODELIST',
%% as `node[01-03,7],gpu5'. Names are cut at their first dot, as Tsung's; this machine is left
%% out unless it is the only one (Tsung keeps its controller's host free); a host named N times
%% (a node file lists a host per core) gets N load nodes and N times the client's weight, as
%% Tsung makes a client of the weight of each name.
-module(beamscale_load_tsung_batch).

-export([hosts/2, slurm/1]).

-include_lib("xmerl/include/xmerl.hrl").

-import(beamscale_load_tsung_dom, [check_attrs/2, attr/2, req/3, positive/3, line/2, fail/4]).

%% A node file is a list of host names: bounded, as any file the reader reads.
-define(MAX_FILE_BYTES, 1024 * 1024).
%% The most hosts a node list may expand to.
-define(MAX_HOSTS, 10000).

%% @doc The hosts of the batch client `C': `{{Host, #{nodes, weight, source_ips}}, Line}'.
-spec hosts(#xmlElement{}, map()) -> [{{string(), map()}, pos_integer()}].
hosts(C, Ctx) ->
    check_attrs(C, Ctx),
    Batch = req(C, batch, Ctx),
    {Var, Form} = case Batch of
                      B when B =:= "torque"; B =:= "pbs" -> {"PBS_NODEFILE", file};
                      "oar" -> {"OAR_NODEFILE", file};
                      "lsf" -> {"LSB_HOSTS", words};
                      "slurm" -> {"SLURM_NODELIST", slurm};
                      _ -> fail(C, Ctx, "<client batch=\"~ts\"> (torque, pbs, oar, lsf or slurm)",
                                [Batch])
                  end,
    Value = case os:getenv(Var) of
                false -> fail(C, Ctx, "<client type=\"batch\" batch=\"~ts\"> reads $~ts, which is "
                                      "not set (run it inside a ~ts job)", [Batch, Var, Batch]);
                V -> V
            end,
    Names = case read(Form, Value) of
                {ok, []} -> fail(C, Ctx, "$~ts names no host", [Var]);
                {ok, Ns} when length(Ns) =< ?MAX_HOSTS -> [short(N) || N <- Ns];
                {ok, _} -> fail(C, Ctx, "$~ts names more than ~b hosts", [Var, ?MAX_HOSTS]);
                {error, Why} -> fail(C, Ctx, "$~ts: ~ts", [Var, Why])
            end,
    Weight = case attr(C, weight) of undefined -> 1; _ -> positive(C, weight, Ctx) end,
    Ips = [{source_ips, [{interface, I}]} || I <- [attr(C, scan_intf)], I =/= undefined],
    [{{H, maps:from_list([{nodes, N}, {weight, N * Weight} | Ips])}, line(C, Ctx)}
     || {H, N} <- counted(others(Names))].

read(file, Path) ->
    case filelib:file_size(Path) of
        Size when Size > ?MAX_FILE_BYTES ->
            {error, io_lib:format("~ts is larger than ~b bytes", [Path, ?MAX_FILE_BYTES])};
        _ ->
            case file:read_file(Path) of
                {ok, Bin} -> {ok, words(unicode:characters_to_list(Bin))};
                {error, R} -> {error, io_lib:format("~ts: ~ts", [Path, file:format_error(R)])}
            end
    end;
read(words, Text) -> {ok, words(Text)};
read(slurm, Text) -> slurm(Text).

words(Text) -> string:lexemes(Text, " \t\r\n").

%% @doc A Slurm host list (`node[01-03,7],gpu5') expanded, the zeros of a range kept.
-spec slurm(string()) -> {ok, [string()]} | {error, string()}.
slurm(Text) ->
    try {ok, lists:append([item(I) || I <- items(string:trim(Text), 0, [], [])])}
    catch throw:{slurm, Why} -> {error, Why}
    end.

%% The list split at the commas outside brackets.
items([], _, [], Acc) -> lists:reverse(Acc);
items([], _, Cur, Acc) -> lists:reverse([lists:reverse(Cur) | Acc]);
items([$, | T], 0, Cur, Acc) -> items(T, 0, [], [lists:reverse(Cur) | Acc]);
items([$[ | T], D, Cur, Acc) -> items(T, D + 1, [$[ | Cur], Acc);
items([$] | T], D, Cur, Acc) -> items(T, D - 1, [$] | Cur], Acc);
items([C | T], D, Cur, Acc) -> items(T, D, [C | Cur], Acc).

item(I) ->
    Re = "^([^\\[\\]]*)\\[([0-9,-]+)\\]([^\\[\\]]*)$",
    case re:run(I, Re, [{capture, all_but_first, list}]) of
        {match, [Pre, Ranges, Post]} ->
            [Pre ++ N ++ Post || R <- string:split(Ranges, ",", all), N <- range(R)];
        nomatch ->
            [throw({slurm, io_lib:format("cannot read \"~ts\"", [I])})
             || lists:member($[, I) orelse lists:member($], I) orelse I =:= ""],
            [I]
    end.

range(R) ->
    case string:split(R, "-", all) of
        [A] when A =/= "" -> [A];
        [A, B] when A =/= "", B =/= "" ->
            {From, To} = {list_to_integer(A), list_to_integer(B)},
            [throw({slurm, io_lib:format("range ~ts", [R])})
             || To < From orelse To - From >= ?MAX_HOSTS],
            [string:right(integer_to_list(X), length(A), $0) || X <- lists:seq(From, To)];
        _ -> throw({slurm, io_lib:format("range \"~ts\"", [R])})
    end.

short(Host) -> hd(string:split(Host, ".")).

%% This machine left out, as Tsung leaves its controller's host, unless it is every host.
others(Names) ->
    {ok, Here} = inet:gethostname(),
    case [N || N <- Names, N =/= short(Here)] of
        [] -> Names;
        Others -> Others
    end.

%% Each host once, in the order first named, with how many times it is named.
counted(Names) ->
    Counts = lists:foldl(fun(N, M) -> maps:update_with(N, fun(X) -> X + 1 end, 1, M) end,
                         #{}, Names),
    {Order, _} = lists:foldl(fun(N, {Acc, Seen}) ->
                                     case Seen of
                                         #{N := _} -> {Acc, Seen};
                                         _ -> {[N | Acc], Seen#{N => true}}
                                     end
                             end, {[], #{}}, Names),
    [{N, maps:get(N, Counts)} || N <- lists:reverse(Order)].
