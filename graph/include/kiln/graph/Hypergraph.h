// Hypergraph.h: a directed hypergraph with ordered ports, stored in Boost.Graph.
//
// The coordinate graph's transforms take several dimensions to several others, in order (a Tile
// has one tail and heads (number, index)), so edges are hyperedges. Boost.Graph stores the
// hypergraph as a bipartite graph: every node and every hyperedge is a Boost vertex, and a Boost
// edge joins a tail node to its hyperedge, or a hyperedge to a head node, carrying its port
// number. Elements are named by Ids that the owner (KernelGraph) hands out, so that Ids are
// unique across the coordinate and control graphs and stable under removal. Iteration follows
// insertion order, which keeps printing and matching deterministic.
#pragma once

#include "kiln/graph/Error.h"
#include "kiln/graph/Id.h"

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <memory>
#include <utility>
#include <variant>
#include <vector>

namespace kiln {

template <class Node, class Edge>
class Hypergraph {
    struct Port {
        int number = 0;
    };
    struct Element {
        Id id = 0;
        std::variant<Node, Edge> value;
    };
    using Graph =
        boost::adjacency_list<boost::listS, boost::listS, boost::bidirectionalS, Element, Port>;
    using Vertex = typename Graph::vertex_descriptor;

public:
    Hypergraph() = default;
    Hypergraph(Hypergraph const& other) { *this = other; }
    Hypergraph& operator=(Hypergraph const& other) {
        if (this == &other)
            return *this;
        graph_->clear();
        vertices_.clear();
        for (Id id : other.elements())
            place(id, add_vertex((*other.graph_)[other.vertex(id)], *graph_));
        for (Id id : other.edges()) {
            auto tails = other.tails(id), heads = other.heads(id);
            connect(id, tails, heads);
        }
        return *this;
    }
    // Moving keeps the Boost graph where it is (vertex descriptors point into it) and leaves
    // the source empty.
    Hypergraph(Hypergraph&& other) noexcept
        : graph_(std::exchange(other.graph_, std::make_unique<Graph>()))
        , vertices_(std::move(other.vertices_)) {}
    Hypergraph& operator=(Hypergraph&& other) noexcept {
        std::swap(graph_, other.graph_);
        std::swap(vertices_, other.vertices_);
        return *this;
    }

    /// Adds a node under a fresh id.
    void addNode(Id id, Node node) {
        KILN_ASSERT(!contains(id), "id {} is taken", id);
        place(id, add_vertex(Element{id, std::move(node)}, *graph_));
    }

    /// Adds a hyperedge from `tails` to `heads` (both ordered) under a fresh id.
    void addEdge(Id id, Edge edge, std::vector<Id> const& tails, std::vector<Id> const& heads) {
        KILN_ASSERT(!contains(id), "id {} is taken", id);
        for (Id n : tails)
            KILN_ASSERT(isNode(n), "tail {} of edge {} is not a node", n, id);
        for (Id n : heads)
            KILN_ASSERT(isNode(n), "head {} of edge {} is not a node", n, id);
        place(id, add_vertex(Element{id, std::move(edge)}, *graph_));
        connect(id, tails, heads);
    }

    /// Removes an edge, or a node that no edge touches.
    void remove(Id id) {
        Vertex v = vertex(id);
        if (isNode(id))
            KILN_ASSERT(in_degree(v, *graph_) == 0 && out_degree(v, *graph_) == 0,
                        "node {} still has edges", id);
        clear_vertex(v, *graph_);
        remove_vertex(v, *graph_);
        vertices_[static_cast<std::size_t>(id)] = nullptr;
    }

    bool contains(Id id) const {
        return id >= 0 && static_cast<std::size_t>(id) < vertices_.size() &&
               vertices_[static_cast<std::size_t>(id)] != nullptr;
    }
    bool isNode(Id id) const { return contains(id) && (*graph_)[vertex(id)].value.index() == 0; }
    bool isEdge(Id id) const { return contains(id) && (*graph_)[vertex(id)].value.index() == 1; }

    Node const& node(Id id) const { return std::get<0>(element(id)); }
    Node& node(Id id) { return std::get<0>((*graph_)[vertex(id)].value); }
    Edge const& edge(Id id) const { return std::get<1>(element(id)); }
    Edge& edge(Id id) { return std::get<1>((*graph_)[vertex(id)].value); }

    /// The ordered tails (inputs) of hyperedge `id`.
    std::vector<Id> tails(Id id) const { return ports(id, /*incoming=*/true); }
    /// The ordered heads (outputs) of hyperedge `id`.
    std::vector<Id> heads(Id id) const { return ports(id, /*incoming=*/false); }

    /// Hyperedges that have node `id` among their tails.
    std::vector<Id> outgoing(Id id) const {
        std::vector<Id> result;
        for (auto e : boost::make_iterator_range(out_edges(vertex(id), *graph_)))
            pushUnique(result, (*graph_)[target(e, *graph_)].id);
        return result;
    }
    /// Hyperedges that have node `id` among their heads.
    std::vector<Id> incoming(Id id) const {
        std::vector<Id> result;
        for (auto e : boost::make_iterator_range(in_edges(vertex(id), *graph_)))
            pushUnique(result, (*graph_)[source(e, *graph_)].id);
        return result;
    }

    /// Every node id, in insertion order.
    std::vector<Id> nodes() const { return collect(0); }
    /// Every hyperedge id, in insertion order.
    std::vector<Id> edges() const { return collect(1); }
    /// Nodes and hyperedges, in insertion order.
    std::vector<Id> elements() const { return collect(-1); }

    std::size_t size() const { return num_vertices(*graph_); }

private:
    std::variant<Node, Edge> const& element(Id id) const { return (*graph_)[vertex(id)].value; }

    Vertex vertex(Id id) const {
        KILN_ASSERT(contains(id), "no element {}", id);
        return vertices_[static_cast<std::size_t>(id)];
    }

    void place(Id id, Vertex v) {
        KILN_ASSERT(id >= 0, "negative id {}", id);
        if (static_cast<std::size_t>(id) >= vertices_.size())
            vertices_.resize(static_cast<std::size_t>(id) + 1, nullptr);
        vertices_[static_cast<std::size_t>(id)] = v;
    }

    void connect(Id id, std::vector<Id> const& tails, std::vector<Id> const& heads) {
        Vertex const e = vertex(id);
        for (std::size_t i = 0; i < tails.size(); ++i)
            add_edge(vertex(tails[i]), e, Port{static_cast<int>(i)}, *graph_);
        for (std::size_t i = 0; i < heads.size(); ++i)
            add_edge(e, vertex(heads[i]), Port{static_cast<int>(i)}, *graph_);
    }

    std::vector<Id> ports(Id id, bool incoming) const {
        KILN_ASSERT(isEdge(id), "{} is not an edge", id);
        std::vector<std::pair<int, Id>> numbered;
        Vertex const v = vertex(id);
        if (incoming)
            for (auto e : boost::make_iterator_range(in_edges(v, *graph_)))
                numbered.emplace_back((*graph_)[e].number, (*graph_)[source(e, *graph_)].id);
        else
            for (auto e : boost::make_iterator_range(out_edges(v, *graph_)))
                numbered.emplace_back((*graph_)[e].number, (*graph_)[target(e, *graph_)].id);
        std::sort(numbered.begin(), numbered.end());
        std::vector<Id> result;
        result.reserve(numbered.size());
        for (auto const& [number, node] : numbered)
            result.push_back(node);
        return result;
    }

    std::vector<Id> collect(int which) const {
        std::vector<Id> result;
        result.reserve(num_vertices(*graph_));
        for (auto v : boost::make_iterator_range(boost::vertices(*graph_)))
            if (which < 0 || static_cast<int>((*graph_)[v].value.index()) == which)
                result.push_back((*graph_)[v].id);
        return result;
    }

    static void pushUnique(std::vector<Id>& ids, Id id) {
        if (std::find(ids.begin(), ids.end(), id) == ids.end())
            ids.push_back(id);
    }

    std::unique_ptr<Graph> graph_ = std::make_unique<Graph>();
    std::vector<Vertex> vertices_; // by id; nullptr once removed
};

} // namespace kiln
