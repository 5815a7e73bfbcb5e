%% @doc `perf script' text folded into stacks, and folded stacks as text (Brendan Gregg's
%% format: `root;caller;leaf COUNT' a line). Pure. A stack is a list of frame names, root
%% first; its root is the sampled thread's kind (`scheduler', `dirty_cpu_sch', `aux'...), so
%% the flame graph splits schedulers from the emulator's other threads. Frame names: JIT
%% frames lose perf's `$' (`mod:fun/arity'), kernel frames get `[k]', offsets are dropped and
%% an unresolved address is `[DSO]' (beam.smp is stripped: its static functions show so).
-module(beamscale_format_perf).

-export([fold/1, text/1, parse_folded/1, thread_kind/1]).
-export_type([folded/0]).

%% Stack (root first) to its sample count.
-type folded() :: #{[binary()] => pos_integer()}.

%% @doc Fold the text `perf script' prints (samples with call chains) into stacks.
-spec fold(iodata()) -> folded().
fold(Text) ->
    Lines = binary:split(iolist_to_binary(Text), <<"\n">>, [global]),
    fold(Lines, none, [], #{}).

fold([], Thread, Frames, Acc) -> add(Thread, Frames, Acc);
fold([<<>> | Rest], Thread, Frames, Acc) -> fold(Rest, none, [], add(Thread, Frames, Acc));
fold([<<C, _/binary>> = Line | Rest], Thread, Frames, Acc) when C =:= $\t; C =:= $\s ->
    case Thread of
        none -> fold(Rest, Thread, Frames, Acc);
        _ -> fold(Rest, Thread, [frame(Line) | Frames], Acc)
    end;
fold([Header | Rest], Thread, Frames, Acc) ->
    %% A header without the blank line before it still ends the sample before it.
    Acc1 = add(Thread, Frames, Acc),
    [Comm | _] = binary:split(Header, [<<" ">>, <<"\t">>]),
    fold(Rest, thread_kind(Comm), [], Acc1).

%% perf prints frames leaf first; `Frames' gathered them reversed, so root first.
%% A header without frames (a line perf printed that is no sample) counts nothing.
add(none, _Frames, Acc) -> Acc;
add(_Thread, [], Acc) -> Acc;
add(Thread, Frames, Acc) ->
    Stack = [Thread | Frames],
    maps:update_with(Stack, fun(N) -> N + 1 end, 1, Acc).

%% `    ADDR SYM+0xOFF (DSO)'
frame(Line) ->
    Trimmed = string:trim(Line, leading),
    Rest = case binary:split(Trimmed, <<" ">>) of
               [_Addr, R] -> R;
               [_Addr] -> <<"[unknown]">>
           end,
    {Sym, Dso} = sym_dso(Rest),
    name(strip_offset(Sym), Dso).

sym_dso(Rest0) ->
    %% The JIT's memory is a deleted memfd: `(/memfd:vmem (deleted))'.
    Rest = binary:replace(Rest0, <<" (deleted))">>, <<")">>),
    case binary:matches(Rest, <<" (">>) of
        [] -> {Rest, <<>>};
        Ms ->
            {Pos, _} = lists:last(Ms),
            <<Sym:Pos/binary, " (", Dso0/binary>> = Rest,
            {Sym, string:trim(Dso0, trailing, ")")}
    end.

strip_offset(Sym) ->
    case binary:matches(Sym, <<"+0x">>) of
        [] -> Sym;
        Ms ->
            {Pos, _} = lists:last(Ms),
            binary:part(Sym, 0, Pos)
    end.

name(<<"[unknown]">>, <<>>) -> <<"[unknown]">>;
name(<<"[unknown]">>, <<"[unknown]">>) -> <<"[unknown]">>;
name(<<"[unknown]">>, <<"/memfd:", _/binary>>) -> <<"[jit]">>;
name(<<"[unknown]">>, Dso) -> <<"[", (filename:basename(Dso))/binary, "]">>;
name(<<"$", Jit/binary>>, _Dso) -> Jit;
name(Sym, <<"[kernel.kallsyms]">>) -> <<Sym/binary, " [k]">>;
name(Sym, _Dso) -> Sym.

%% @doc A thread's kind from its name: `1_scheduler' and `2_scheduler' are both `scheduler'.
-spec thread_kind(binary()) -> binary().
thread_kind(Comm) ->
    Parts = binary:split(Comm, <<"_">>, [global]),
    Kept = [P || P <- Parts, P =/= <<>>, not digits(P)],
    case Kept of
        [] -> Comm;
        _ -> iolist_to_binary(lists:join($_, Kept))
    end.

digits(P) -> lists:all(fun(C) -> C >= $0 andalso C =< $9 end, binary_to_list(P)).

%% @doc Folded stacks as text, a stack a line, most samples first.
-spec text(folded()) -> iodata().
text(Folded) ->
    Sorted = lists:sort(fun({S1, N1}, {S2, N2}) -> {N1, S2} >= {N2, S1} end,
                        maps:to_list(Folded)),
    [[lists:join($;, Stack), $\s, integer_to_binary(N), $\n] || {Stack, N} <- Sorted].

%% @doc Folded text read back; lines that are not `STACK COUNT' are skipped.
-spec parse_folded(binary()) -> folded().
parse_folded(Bin) ->
    lists:foldl(fun(Line, Acc) ->
                        case line(Line) of
                            {Stack, N} -> maps:update_with(Stack, fun(M) -> M + N end, N, Acc);
                            skip -> Acc
                        end
                end, #{}, binary:split(Bin, <<"\n">>, [global])).

line(Line) ->
    case binary:matches(Line, <<" ">>) of
        [] -> skip;
        Ms ->
            {Pos, _} = lists:last(Ms),
            <<Stack:Pos/binary, " ", Count/binary>> = Line,
            try binary_to_integer(Count) of
                N when N > 0, Stack =/= <<>> -> {binary:split(Stack, <<";">>, [global]), N};
                _ -> skip
            catch error:badarg -> skip
            end
    end.
