%% @doc CPU profiles (folded stacks, `beamscale_format_perf') in the terms that matter for
%% scaling: each sample's category, the shares of categories and functions, and what grew
%% between two points (docs/profiles.md). Pure.
%%
%% A sample's category is that of the first frame from the leaf that has one: a mutex taken
%% inside an ETS insert is a lock, the insert's own code is ETS, Erlang code that calls neither
%% is `erlang'. Waiting (`sched_yield', futex, the emulator's thread events) is the caller's:
%% waiting in the scheduler's loop is `scheduler', waiting anywhere else (in a BIF, in a lock)
%% is `locks', waiting with no caller known (stacks cut short) is `scheduler'. Frames that say
%% nothing (unresolved addresses, the kernel's syscall entry and task switch) are passed over.
%% The emulator's other C code and the kernel's count only when no caller has a category.
-module(beamscale_stats_profile).

-export([category/1, categories/0, category_shares/1, top/2, grew/3, samples/1]).
-export_type([category/0, share/0, growth/0]).

-type category() :: erlang | gc | ets | messages | io | scheduler | locks | alloc | emulator |
                    kernel.
-type share() :: {Name :: binary() | category(), Self :: float(), Total :: float()}.
%% A name, its share (%) at the small and large point, and the difference in points.
-type growth() :: {binary() | category(), float(), float(), float()}.

%% Name fragments by category, tried in this order. Locks first: a lock's code is inside the
%% code of what it protects; I/O before messages (`tcp_sendmsg' is I/O).
-define(RULES,
        [{locks, [<<"mtx">>, <<"mutex">>, <<"rwlock">>, <<"spin_lock">>, <<"spinlock">>,
                  <<"ethr_rw">>, <<"lll_lock">>, <<"_lock_wait">>, <<"erts_lc_">>]},
         {wait, [<<"sched_yield">>, <<"ethr_event">>, <<"futex">>]},
         {scheduler, [<<"scheduler_wait">>, <<"erts_schedule">>, <<"thr_progress">>,
                      <<"sched_spin">>, <<"erts_sched_">>, <<"wake_scheduler">>,
                      <<"steal">>, <<"sched_thread_func">>]},
         {gc, [<<"garbage_collect">>, <<"erts_gc">>, <<"gc_">>, <<"_gc">>, <<"sweep">>,
               <<"minor_collection">>, <<"major_collection">>,
               <<"erts_hibernate">>]},
         {ets, [<<"ets:">>, <<"ets_">>, <<"db_">>, <<"erts_db">>, <<"dbtable">>,
                <<"tree_">>, <<"hash_">>]},
         {io, [<<"port">>, <<"driver">>, <<"tcp">>, <<"inet">>, <<"sock">>, <<"check_io">>,
               <<"poll">>, <<"sys_read">>, <<"sys_write">>, <<"__libc_read">>,
               <<"__libc_write">>, <<"__write">>, <<"__read">>, <<"recv">>, <<"nif_select">>]},
         {messages, [<<"send">>, <<"message">>, <<"erts_msg">>, <<"proc_sig">>,
                     <<"loop_rec">>, <<"remove_message">>, <<"receive">>, <<"signal">>]},
         {alloc, [<<"alloc">>, <<"malloc">>, <<"free">>, <<"mmap">>, <<"munmap">>, <<"mseg">>,
                  <<"carrier">>, <<"page_fault">>, <<"erts_mbc">>, <<"erts_sbc">>]}]).
%% Frames that say nothing about the work: the next frame towards the root decides.
-define(SILENT, [<<"[">>, <<"entry_syscall">>, <<"do_syscall">>,
                 <<"syscall_64">>, <<"__schedule">>, <<"schedule [k]">>,
                 <<"finish_task_switch">>]).

%% @doc The categories, in the order the report lists them.
-spec categories() -> [category()].
categories() ->
    [erlang, gc, ets, messages, io, scheduler, locks, alloc, emulator, kernel].

%% @doc One frame's category on its own, `none' for a frame that says nothing, `wait' for a
%% frame of waiting (whose category is its caller's).
-spec category(binary()) -> category() | wait | none.
category(Frame) ->
    Lower = string:lowercase(Frame),
    case {silent(Lower), erlang_module(Frame)} of
        {true, _} -> none;
        {false, none} -> rule(Lower, ?RULES, Frame);
        {false, Mod} -> module_category(Mod)
    end.

%% A JIT frame of Erlang code, `mod:fun/arity', has its module's category; the JIT's shared
%% code (`global::...') is named as C is.
erlang_module(<<"global::", _/binary>>) -> none;
erlang_module(Frame) ->
    case binary:split(Frame, <<":">>) of
        [Mod, _] -> Mod;
        [_] -> none
    end.

module_category(<<"ets">>) -> ets;
module_category(Mod) ->
    Io = [<<"gen_tcp">>, <<"gen_udp">>, <<"inet">>, <<"prim_inet">>, <<"socket">>,
          <<"prim_socket">>, <<"ssl">>, <<"file">>, <<"prim_file">>],
    case lists:member(Mod, Io) of
        true -> io;
        false -> erlang
    end.

silent(Lower) ->
    lists:any(fun(P) -> binary:match(Lower, P) =/= nomatch andalso prefix_or_in(P, Lower) end,
              ?SILENT).

%% `[' only as the first character (an unresolved `[beam.smp]'), not a kernel `[k]' suffix.
prefix_or_in(<<"[">>, Lower) -> binary:first(Lower) =:= $[;
prefix_or_in(_, _) -> true.

rule(Lower, [{Cat, Parts} | Rest], Frame) ->
    case lists:any(fun(P) -> binary:match(Lower, P) =/= nomatch end, Parts) of
        true -> Cat;
        false -> rule(Lower, Rest, Frame)
    end;
rule(_Lower, [], Frame) ->
    case binary:match(Frame, <<" [k]">>) of
        nomatch -> erlang_or_emulator(Frame);
        _ -> kernel
    end.

%% JIT frames are `mod:fun/arity' (perf's `$' dropped) and the JIT's shared code `global::';
%% both run Erlang code.
erlang_or_emulator(Frame) ->
    case binary:match(Frame, [<<":">>]) of
        nomatch -> emulator;
        _ -> erlang
    end.

%% @doc A stack's category: its first frame from the leaf that has one (the thread, the root,
%% excluded); a stack of silent frames only is `emulator'.
-spec stack_category([binary()]) -> category().
stack_category([_Thread | Frames]) -> first_category(lists:reverse(Frames)).

first_category(Frames) -> first_category(Frames, false, emulator).

%% `emulator' and `kernel' frames are weak: C code inside ETS's (a copy into the table) or an
%% interrupt in it is ETS's; they count only when no caller has a category.
first_category([], true, _Weak) -> scheduler;
first_category([], false, Weak) -> Weak;
first_category([F | Rest], Waiting, Weak) ->
    case {category(F), Waiting} of
        {none, _} -> first_category(Rest, Waiting, Weak);
        {wait, _} -> first_category(Rest, true, Weak);
        {W, _} when W =:= emulator; W =:= kernel ->
            first_category(Rest, Waiting, first_weak(Weak, W));
        {scheduler, _} -> scheduler;
        {_Cat, true} -> locks;
        {Cat, false} -> Cat
    end.

first_weak(emulator, W) -> W;
first_weak(Weak, _W) -> Weak.

%% @doc Samples in all.
-spec samples(beamscale_format_perf:folded()) -> non_neg_integer().
samples(Folded) -> lists:sum(maps:values(Folded)).

%% @doc Each category's share (%) of the samples, every category listed.
-spec category_shares(beamscale_format_perf:folded()) -> [{category(), float()}].
category_shares(Folded) ->
    Total = max(1, samples(Folded)),
    Counts = maps:fold(fun(Stack, N, Acc) ->
                               maps:update_with(stack_category(Stack), fun(M) -> M + N end, N,
                                                Acc)
                       end, #{}, Folded),
    [{C, 100 * maps:get(C, Counts, 0) / Total} || C <- categories()].

%% @doc The `N' functions with most samples of their own (self, %), with their total share (%:
%% samples with the function anywhere on the stack).
-spec top(beamscale_format_perf:folded(), pos_integer()) -> [share()].
top(Folded, N) ->
    Total = max(1, samples(Folded)),
    {Self, Incl} = function_counts(Folded),
    Sorted = lists:sort(fun({F1, S1}, {F2, S2}) -> {S1, F2} >= {S2, F1} end,
                        maps:to_list(Self)),
    [{F, 100 * S / Total, 100 * maps:get(F, Incl) / Total}
     || {F, S} <- lists:sublist(Sorted, N)].

function_counts(Folded) ->
    maps:fold(fun([_Thread | Frames] = Stack, N, {Self, Incl}) ->
                      Leaf = lists:last(Stack),
                      Self1 = maps:update_with(Leaf, fun(M) -> M + N end, N, Self),
                      Incl1 = lists:foldl(fun(F, I) -> maps:update_with(F, fun(M) -> M + N end,
                                                                        N, I)
                                          end, Incl, lists:usort([Leaf | Frames])),
                      {Self1, Incl1}
              end, {#{}, #{}}, Folded).

%% @doc What grew from `Small' to `Large': categories (every one, most grown first) and the
%% `N' functions whose self share grew most (only those that grew).
-spec grew(beamscale_format_perf:folded(), beamscale_format_perf:folded(), pos_integer()) ->
    #{categories := [growth()], functions := [growth()]}.
grew(Small, Large, N) ->
    Cats = diff(maps:from_list(category_shares(Small)), maps:from_list(category_shares(Large))),
    Funs = diff(self_shares(Small), self_shares(Large)),
    #{categories => Cats, functions => lists:sublist([G || {_, _, _, D} = G <- Funs, D > 0], N)}.

self_shares(Folded) ->
    Total = max(1, samples(Folded)),
    {Self, _} = function_counts(Folded),
    maps:map(fun(_, S) -> 100 * S / Total end, Self).

diff(A, B) ->
    Names = lists:usort(maps:keys(A) ++ maps:keys(B)),
    Rows = [{K, maps:get(K, A, 0.0), maps:get(K, B, 0.0)} || K <- Names],
    lists:sort(fun({K1, _, _, D1}, {K2, _, _, D2}) -> {D1, K2} >= {D2, K1} end,
               [{K, X, Y, Y - X} || {K, X, Y} <- Rows]).
